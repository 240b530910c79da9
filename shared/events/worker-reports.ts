/**
 * Which event kinds a worker may write into the log (`POST /api/worker/events`). A worker
 * is trusted with what it observes: telemetry of the jobs deployed to it (`job-*`) and
 * facts about itself (`worker-*`). What the server decides (deployments, stages, removals,
 * a worker's creation or removal, its first heartbeat, its going offline) is recorded by
 * the server only, so a worker cannot forge it; nor can it speak for users or contexts.
 *
 * @example
 *   workerReportScope('job-errors');      // 'job'   (needs a job deployed to the worker)
 *   workerReportScope('worker-logs');     // 'worker'
 *   workerReportScope('context-changed'); // undefined (refused)
 */
import type { EventType } from './vocabulary.ts';

/** `job-*` kinds the control plane records itself. */
const SERVER_JOB_KINDS: ReadonlySet<string> = new Set([
  'job-deploy-ready',
  'job-deployed',
  'job-initiated',
  'job-removing',
  'job-removed',
  'job-remove-failed',
  'job-remove-ready',
  'job-replaced',
  'job-required',
  'job-staged',
  'job-state-transition',
  'job-unstaged',
  'job-updated',
  'job-wants-dslir-key-reply',
  'job-wants-variables-reply',
  'job-wants-credentials-reply',
  'job-wants-credentials-error',
  'job-wants-secret-variables-reply',
  'job-credentials-invalidated',
]);

/** `worker-*` kinds the control plane records itself. */
const SERVER_WORKER_KINDS: ReadonlySet<string> = new Set([
  'worker-created',
  'worker-removed',
  'worker-modified',
  'worker-updated',
  'worker-first-seen',
  'worker-offline',
  'worker-licensed',
  'worker-unlicensed',
  'worker-command-for-job',
  'worker-verification-token',
  'worker-wants-initial-settings-reply',
  'worker-wants-deployed-jobs-reply',
  'worker-wants-job-configuration-reply',
  'worker-wants-dslir-key-reply',
]);

/** `job` when the kind is telemetry of one job, `worker` when it is about the worker, else undefined. */
export function workerReportScope(type: EventType): 'job' | 'worker' | undefined {
  if (type.startsWith('job-')) return SERVER_JOB_KINDS.has(type) ? undefined : 'job';
  if (type.startsWith('worker-')) return SERVER_WORKER_KINDS.has(type) ? undefined : 'worker';
  return undefined;
}
