/**
 * Runs that stop at their budget without getting anywhere. A run (or a part) stopped at its
 * budget has its rest requested again at once, and that request carries how many attempts
 * in a row stopped without progress (`stalls`, shared/runs/run-request.ts). Progress is an
 * object read to its end and fingerprinted, objects handed over to parts, or a `window`
 * read to its end. At STALL_LIMIT stalls in a row the rest is not requested again: the
 * job cannot make progress within its budget, and would repeat for ever (re-sending what
 * it had read each time). It is reported once (`run-job-failure`, with what to do), its
 * deployment shows `failed` with that reason, and its trigger, if it has one, runs it
 * again at its next time as usual; a job without one runs again when deployed again (or,
 * reading notifications, when the next ones come).
 *
 * @example
 *   const stalls = nextStalls(request.stalls, madeProgress(endedPayloads));
 *   if (stalls >= STALL_LIMIT) giveUp(...); else requestRuns(deps, [{ ...job, stalls }], 'continue');
 */
import type { Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { EventType } from '../../shared/events/vocabulary.ts';
import { triggerOf } from '../../shared/job/schema.ts';
import { nextDueMs, type TickState } from '../../shared/job/tick-schedule.ts';
import { STALL_LIMIT } from '../../shared/runs/run-request.ts';
import { jobCollection } from '../adapters/firestore-paths.ts';
import { appendEvent } from '../events/event-log.ts';
import { firestoreWatermarks } from '../runner/fingerprints/firestore.ts';
import { randomOffset } from '../runner/triggers.ts';
import type { ScheduledJob } from '../scheduled/tick.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';
import { recordCloudState } from './cloud-states.ts';

export { STALL_LIMIT };

/** Whether the `job-run-ended` payloads of one attempt show progress. */
export function madeProgress(ended: Record<string, unknown>[]): boolean {
  // More than one: a window was read to its end and the next one begun.
  if (ended.length > 1) return true;
  return ended.some((p) => count(p.fingerprinted) > 0 || count(p.sharded_objects) > 0);
}

/** The stall count after an attempt that stopped at its budget. */
export function nextStalls(before: number | undefined, progress: boolean): number {
  return progress ? 0 : (before ?? 0) + 1;
}

/** What a viewer reads when a job is given up (no content of the job's: counts and settings only). */
export function stallReason(budgetMs: number, what: 'run' | { parts: number }): string {
  const stopped =
    what === 'run'
      ? `the run was stopped at its time budget of ${budgetMs} ms ${STALL_LIMIT} times in a row without reading an object to its end, and its rest was not requested again`
      : `${what.parts} ${what.parts === 1 ? 'part' : 'parts'} of the run ${what.parts === 1 ? 'was' : 'were'} stopped at the time budget of ${budgetMs} ms ${STALL_LIMIT} times in a row without reading an object to its end, and given up`;
  return `${stopped}: raise the budget (SLUICE_CLOUD_RUN_BUDGET, terraform cloud_run_budget), make the output answer faster, or turn fingerprinting on (fingerprinting: true) so that a run keeps what it read; the job's trigger runs it again at its next time, a job without one when it is deployed again`;
}

/** What the job's trigger makes of it once its stalled rest is given up: its next time as usual, or null without one. */
export async function nextDueAsUsual(db: Firestore, job: ScheduledJob): Promise<number | null> {
  const trigger = triggerOf(job.definition);
  if (!trigger) return null;
  const spec = trigger.interval ?? trigger.cron;
  const now = Date.now();
  const state = ((await jobCollection(db, job.tenant, job.name, 'scheduled').doc('state').get()).data() ??
    {}) as TickState;
  const offsetMs = spec
    ? await randomOffset(
        { job: job.name, watermarks: firestoreWatermarks(db, { tenant: job.tenant }) },
        parseDuration(spec['random-offset']),
      )
    : 0;
  // As if the run had ended now: the trigger's next time after it.
  return nextDueMs(
    trigger,
    { ...state, interrupted: false, last_run_ended_ms: now },
    { offsetMs, version: String(job.version ?? ''), firstSeenMs: now },
  );
}

/**
 * Gives a run's rest up: records the deployment `failed` with the reason, frees the job
 * (`release`: with its next due time as usual), then reports it once as `run-job-failure`.
 */
export async function reportGivenUp(
  db: Firestore,
  tenant: string,
  job: string,
  reason: string,
  budgetMs: number,
  release: () => Promise<void>,
): Promise<void> {
  await recordCloudState(db, tenant, { job, state: 'failed', error: reason });
  await release();
  await appendEvent(db, tenant, {
    type: 'run-job-failure' as EventType,
    source: 'worker',
    worker: CLOUD_WORKER,
    job,
    payload: { job, reason, attempts: STALL_LIMIT, budget_ms: budgetMs },
  });
}

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
