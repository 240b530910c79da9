/**
 * `POST /api/worker/heartbeat` (role `worker`): the worker says it is alive and how its
 * jobs are doing. Updates `last_seen` (3 missed intervals mean `offline`) and the state of
 * each of its deployments; the first heartbeat ever records `worker-first-seen`.
 *
 * `session` (a Sluice extension) keeps one runtime per worker: a runtime names itself and
 * claims the worker with its first heartbeat; the newest claim wins, so a runtime started
 * again after a crash takes over at once. A heartbeat from a runtime that was taken over
 * is refused (409) and records nothing: it stops its jobs and ends, instead of running
 * them beside the new one (each event delivered twice).
 */

import type { OpenAPIHono } from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { DEPLOYMENT_ERROR_MAX_CHARS, HEARTBEAT_JOBS_PER_REQUEST } from '../../shared/api/worker-limits.ts';
import { ApiError } from '../../shared/errors.ts';
import { JOB_NAME } from '../../shared/job/schema.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, noContent } from '../app/openapi-common.ts';
import { appendEventIn } from '../events/event-log.ts';
import { readDeploymentStates } from '../jobs/deployments.ts';
import { DEPLOYMENT_STATES } from '../jobs/store.ts';

const Heartbeat = z
  .strictObject({
    jobs: z
      .array(
        z.strictObject({
          // Not JobName: a job stored under a name refused today must not stop the heartbeat.
          name: z.string().regex(JOB_NAME),
          state: z.enum(DEPLOYMENT_STATES),
          error: z.string().max(DEPLOYMENT_ERROR_MAX_CHARS).optional(),
        }),
      )
      .max(HEARTBEAT_JOBS_PER_REQUEST)
      .default([]),
    session: z
      .strictObject({
        id: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
        claim: z.boolean().default(false),
      })
      .optional()
      .openapi({
        description:
          'The runtime sending it (a Sluice extension): `claim` on its first heartbeat takes the worker over; a heartbeat of a runtime taken over since is a 409.',
      }),
  })
  .openapi('Heartbeat');

export function registerHeartbeat(routes: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/heartbeat',
      tags: ['worker'],
      summary: 'The worker is alive; states of its jobs',
      security: BEARER,
      request: body(Heartbeat),
      responses: { 204: noContent('Recorded'), ...errors(400, 401, 403, 409) },
    }),
    async (c) => {
      const { jobs, session } = c.req.valid('json');
      const { tenant, subject: worker } = c.get('principal');
      const db = await deps.clients.firestore();
      const now = new Date().toISOString();
      await db.runTransaction(async (tx) => {
        const workerRef = tenantCollection(db, tenant, 'workers').doc(worker);
        const workerSnap = await tx.get(workerRef);
        // Reads before writes, as a transaction requires.
        const writeStates = await readDeploymentStates(
          db,
          tenant,
          worker,
          jobs.map((job) => ({
            job: job.name,
            state: job.state,
            ...(job.error ? { error: job.error } : {}),
          })),
          tx,
        );
        const holder = workerSnap.get('session') as string | undefined;
        if (session && !session.claim && holder && holder !== session.id) {
          throw ApiError.conflict(
            `another runtime took over worker ${worker} (it claimed it later); this one must stop its jobs`,
          );
        }
        if (workerSnap.exists && !workerSnap.get('last_seen')) {
          appendEventIn(tx, db, tenant, { type: 'worker-first-seen', source: 'worker', worker, payload: {} });
        }
        if (workerSnap.exists)
          tx.update(workerRef, {
            last_seen: now,
            online: true,
            ...(session && session.id !== holder ? { session: session.id } : {}),
          });
        writeStates();
      });
      return c.body(null, 204);
    },
  );
}
