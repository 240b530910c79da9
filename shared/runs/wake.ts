/**
 * What a runner does when object notifications come for a job on the `cloud` worker
 * (functions/runs/wake.ts). A `gcs` job that reads notifications without a trigger has no
 * clock there: the bucket's topic also pushes each notification to the runner function,
 * and the first of a batch requests a run, which reads every notification waiting in the
 * job's own subscription and ends when quiet. The rest of the batch finds that run
 * requested and asks for nothing more, so one run serves many notifications.
 *
 * A notification that comes while the job runs is not dropped: that run may already have
 * read its last message, so the push is answered "again later" and Pub/Sub brings it back
 * with back-off, when the run has ended (the run then finds the message read, or reads it).
 * The run's runner holds the job until it has recorded what the run leaves, and frees it in
 * the same write: a job seen free with a run requested has that run still to start.
 *
 * @example
 *   decideWake({ deployed: true, woken: true, nextDueMs: null, leaseExpiresMs: undefined }, Date.now()); // 'request'
 */
import { z } from 'zod';
import { RESOURCE_ID, TENANT_NAME } from '../auth/names.ts';

/** The runner function's path for wakes: `RUNNER_URL/wake?tenant=T&job=J`. */
export const WAKE_PATH = '/wake';

/** Which job a notification wakes: named in the push subscription's endpoint (`?tenant=&job=`). */
export const WakeTargetSchema = z
  .object({
    // The same rules as the names themselves: a slash could point a document path elsewhere.
    tenant: z.string().regex(TENANT_NAME),
    job: z.string().regex(RESOURCE_ID),
  })
  .strict();

export type WakeTarget = z.infer<typeof WakeTargetSchema>;

/** The job as it stood at one moment: its deployment and lease read together. */
export interface WakeState {
  /** Deployed to the `cloud` worker. */
  deployed: boolean;
  /** Its `gcs` input reads notifications and has no trigger (cloud-worker-rules.ts wokenByNotifications). */
  woken: boolean;
  /** When the tick would request it (a future time: a run is requested and waits; null: never). */
  nextDueMs?: number | null;
  /** Until when a run holds the job's lease (absent: nobody runs it). */
  leaseExpiresMs?: number;
}

/**
 * - `request`: request a run now (acknowledge);
 * - `requested`: a requested run has not started yet, and will read this (acknowledge);
 * - `running`: a run may have read its last message already, or has ended and not yet
 *   recorded it (bring it back later);
 * - `not-woken`: not a job notifications wake (acknowledge, nothing to do).
 */
export type WakeDecision = 'request' | 'requested' | 'running' | 'not-woken';

export function decideWake(state: WakeState, nowMs: number): WakeDecision {
  if (!state.deployed || !state.woken) return 'not-woken';
  if (state.leaseExpiresMs !== undefined && state.leaseExpiresMs > nowMs) return 'running';
  if (typeof state.nextDueMs === 'number' && state.nextDueMs > nowMs) return 'requested';
  return 'request';
}

/** Whether Pub/Sub is done with the notification. */
export const wakeAcknowledged = (decision: WakeDecision): boolean => decision !== 'running';
