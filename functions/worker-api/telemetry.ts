/**
 * What workers send back: `POST /api/worker/events` (job telemetry into the event log),
 * and `POST /api/worker/fingerprints/check|commit` (the shared fingerprint store, so an
 * object read by one worker run is not read again by the next, wherever it runs).
 *
 * A worker speaks only for itself: `job-*` telemetry of jobs deployed to it, `worker-*`
 * kinds about itself (shared/events/worker-reports.ts), within its telemetry quota. A batch
 * with anything else is refused whole (403 or 429) and nothing of it is written.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { FINGERPRINT_KEYS_PER_REQUEST, REPORTS_PER_REQUEST } from '../../shared/api/worker-limits.ts';
import { parseDuration } from '../../shared/duration.ts';
import { ApiError } from '../../shared/errors.ts';
import { EVENT_TYPES, type EventType } from '../../shared/events/vocabulary.ts';
import { workerReportScope } from '../../shared/events/worker-reports.ts';
import { JobName } from '../../shared/job/schema.ts';
import { hasOwn } from '../../shared/own.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { buildEvent, eventsCollection, storedEvent } from '../events/event-log.ts';
import { type JobRecord, jobsCollection } from '../jobs/store.ts';
import { EventPayload, unstorable } from '../messages/payload.ts';
import { firestoreFingerprints } from '../runner/fingerprints/firestore.ts';
import { readTelemetryQuota, telemetryQuotaRef } from './telemetry-quota.ts';

const WorkerEvent = z.strictObject({
  type: z.enum(EVENT_TYPES as unknown as [EventType, ...EventType[]]),
  job: JobName.optional(),
  tags: z.array(z.string().max(128)).max(32).optional(),
  payload: EventPayload.default({}),
});
/** Own properties only: `deployments['toString']` is a function, not a deployment. */
function deployedHere(record: JobRecord | undefined, worker: string): boolean {
  return hasOwn(record?.deployments, worker);
}

/** Refuses (403) kinds a worker may not write, and job telemetry that names no job. */
function assertReportable(events: { type: EventType; job?: string | undefined }[]): void {
  const refused = new Set<string>();
  for (const e of events) {
    const scope = workerReportScope(e.type);
    if (!scope) refused.add(e.type);
    else if (scope === 'job' && !e.job) refused.add(`${e.type} without a job`);
  }
  if (refused.size)
    throw ApiError.forbidden(
      `a worker reports job-* telemetry of its own jobs and worker-* events about itself, not ${[...refused].join(', ')}; nothing was written`,
    );
}

const Keys = z.array(z.string().min(1).max(1500)).max(FINGERPRINT_KEYS_PER_REQUEST);

export function registerWorkerTelemetry(routes: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/events',
      tags: ['worker'],
      summary: 'Job and worker telemetry into the event log',
      security: BEARER,
      request: body(z.strictObject({ events: z.array(WorkerEvent).min(1).max(REPORTS_PER_REQUEST) })),
      responses: { 202: noContent('Accepted'), ...errors(400, 401, 403, 429) },
    }),
    async (c) => {
      const { tenant, subject: worker } = c.get('principal');
      const reported = c.req.valid('json').events;
      assertReportable(reported);
      const db = await deps.clients.firestore();
      const jobs = [...new Set(reported.flatMap((e) => (e.job ? [e.job] : [])))];
      await db
        .runTransaction(async (tx) => {
          const quotaRef = telemetryQuotaRef(db, tenant, worker);
          const [quota, ...records] = await Promise.all([
            readTelemetryQuota(tx, quotaRef),
            ...jobs.map((job) => tx.get(jobsCollection(db, tenant).doc(job))),
          ]);
          const elsewhere = jobs.filter((_, i) => !deployedHere(records[i]!.data() as JobRecord, worker));
          if (elsewhere.length)
            throw ApiError.forbidden(
              `job(s) ${elsewhere.join(', ')} not deployed to this worker; nothing was written`,
            );
          quota.spend(reported.length);
          for (const e of reported) {
            const event = buildEvent({
              type: e.type,
              source: e.job ? 'job' : 'worker',
              worker,
              payload: e.payload as Record<string, unknown>,
              ...(e.job ? { job: e.job } : {}),
              ...(e.tags ? { tags: e.tags } : {}),
            });
            tx.set(eventsCollection(db, tenant).doc(event.id), storedEvent(event));
          }
        })
        .catch((err: unknown) => {
          throw unstorable(err, 'these events');
        });
      return c.body(null, 202);
    },
  );

  /** Fingerprints belong to a job; a worker may use those of jobs deployed to it. */
  async function storeFor(tenant: string, worker: string, job: string) {
    const db = await deps.clients.firestore();
    const record = (await jobsCollection(db, tenant).doc(job).get()).data() as JobRecord | undefined;
    if (!deployedHere(record, worker)) throw ApiError.forbidden(`job ${job} is not deployed to this worker`);
    return firestoreFingerprints(db, { tenant });
  }

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/fingerprints/check',
      tags: ['worker'],
      summary: 'Which of these fingerprint keys the job has already committed',
      security: BEARER,
      request: body(z.strictObject({ job: JobName, keys: Keys })),
      responses: {
        200: json(z.object({ seen: z.array(z.string()) }), 'Keys already seen'),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const { job, keys } = c.req.valid('json');
      const { tenant, subject } = c.get('principal');
      const seen = await (await storeFor(tenant, subject, job)).seen(job, keys);
      return c.json({ seen: keys.filter((k) => seen.has(k)) }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/fingerprints/commit',
      tags: ['worker'],
      summary: 'Record fingerprint keys after every event of their objects was delivered',
      security: BEARER,
      request: body(z.strictObject({ job: JobName, keys: Keys, max_age: z.string().max(32).default('30d') })),
      responses: { 204: noContent('Committed'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { job, keys, max_age } = c.req.valid('json');
      let maxAgeMs: number;
      try {
        maxAgeMs = parseDuration(max_age);
      } catch (err) {
        throw ApiError.invalid(`max_age: ${(err as Error).message}`, [
          { path: 'max_age', message: (err as Error).message },
        ]);
      }
      const { tenant, subject } = c.get('principal');
      await (await storeFor(tenant, subject, job)).commit(job, keys, maxAgeMs);
      return c.body(null, 204);
    },
  );
}
