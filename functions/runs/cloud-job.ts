/**
 * What a runner runs of a job deployed to the built-in `cloud` worker: the job rendered
 * with its contexts, its `${secret|...}` and `${dyn|...}` values resolved only for this run,
 * and checked again once they are in (a key from a secret must still be a key, not a path).
 * A job that cannot run is refused with the reason, recorded as `job-errors`.
 *
 * The jobs of every tenant run in the control plane's own runners, so a job gets no more
 * than its definition gives it: connections only where the egress policy allows
 * (`SLUICE_EGRESS_ALLOW`: none in the cloud) and a `gcs` job only with its own key (never
 * the function's identity or files).
 */
import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { cloudWorkerProblems, wokenByNotifications } from '../../shared/job/cloud-worker-rules.ts';
import { triggerOf } from '../../shared/job/schema.ts';
import type { AppDeps } from '../app/deps.ts';
import type { ContextStore } from '../contexts/store.ts';
import { appendEvent } from '../events/event-log.ts';
import { renderStaged } from '../jobs/deployments.ts';
import type { JobRecord } from '../jobs/store.ts';
import type { Redactor } from '../runner/redact.ts';
import type { ScheduledJob } from '../scheduled/tick.ts';
import { resolveRuntimeValues } from '../secrets/runtime-values.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';

export type CloudJob =
  | { ok: true; job: ScheduledJob; redact: Redactor; runsOnce: boolean }
  | { ok: false; reason: string }
  /** Not deployed to `cloud` (any more). */
  | { ok: false; reason?: undefined };

export async function renderCloudJob(
  deps: AppDeps,
  db: Firestore,
  contexts: ContextStore,
  doc: DocumentSnapshot,
): Promise<CloudJob> {
  const tenant = doc.ref.parent.parent!.id;
  const record = doc.data() as JobRecord | undefined;
  if (!record?.deployments?.[CLOUD_WORKER]) return { ok: false };
  const refuse = async (reason: string, details?: unknown): Promise<CloudJob> => {
    await appendEvent(db, tenant, {
      type: 'job-errors',
      source: 'worker',
      worker: CLOUD_WORKER,
      job: record.name,
      payload: { reason, ...(details ? { details } : {}) },
    });
    return { ok: false, reason };
  };
  const staged = await renderStaged(contexts, tenant, record, CLOUD_WORKER);
  if (!staged.ok) {
    return refuse(
      `not run: ${staged.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      staged.errors,
    );
  }
  const values = await resolveRuntimeValues(deps, db, tenant, staged.definition);
  if (!values.ok) return refuse(`missing ${values.missing.join(', ')}`);
  const problems = cloudWorkerProblems(values.definition);
  if (problems.length) return refuse(`not run: ${problems[0]!.message}`, problems);
  return {
    ok: true,
    job: { tenant, name: record.name, version: staged.version, definition: values.definition },
    redact: values.redact,
    // A job woken by notifications runs again when they come: idle between runs, not stopped.
    runsOnce: !triggerOf(values.definition) && !wokenByNotifications(values.definition),
  };
}
