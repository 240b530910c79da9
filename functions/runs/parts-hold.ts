/**
 * Who a run is and how its parts hold their job (shards.ts): a run's id, the hold's owner
 * and length, and its renewal. Apart from shards.ts because the parked requests
 * (parked-runs.ts) renew that hold too, and shards.ts parks the parts it hands over.
 *
 * @example
 *   const stop = keepHolding(deps, db, request, runIdOf(request));
 */
import type { Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { leasePath } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { holdLease } from '../scheduled/lease.ts';
import { requestHorizonMs } from './dispatch.ts';

/** How long a run document outlives its last change: as long as Pub/Sub keeps a request (terraform/runs.tf). */
export const RUN_DOCUMENT_TTL_MS = 24 * 60 * 60 * 1000;

/** A run's id: the same for every delivery of its request, unique among the job's requests. */
export function runIdOf(request: RunRequest): string {
  return `${request.reason}-${request.requested_ms}`;
}

export function partsOwner(runId: string): string {
  return `parts:${runId}`;
}

/** How long the parts' hold on their job lasts past its last renewal. */
export function partsHoldMs(deps: AppDeps): number {
  return requestHorizonMs(deps);
}

/**
 * Renews the hold of `runId`'s parts on their job; false when it is no longer theirs (their
 * run ended or was dropped, or another run took the job after the hold lapsed).
 */
export async function holdJob(
  deps: AppDeps,
  db: Firestore,
  request: Pick<RunRequest, 'tenant' | 'job'>,
  runId: string,
): Promise<boolean> {
  const holdMs = partsHoldMs(deps);
  return holdLease(db, leasePath(request.tenant, request.job), partsOwner(runId), {
    untilMs: Date.now() + holdMs,
    renewWithinMs: holdMs / 2,
  });
}

/** Renews the hold (and does `also`) every few seconds until the returned function is called. */
export function keepHolding(
  deps: AppDeps,
  db: Firestore,
  request: RunRequest,
  runId: string,
  also?: () => Promise<void>,
): () => void {
  const everyMs = Math.min(parseDuration(deps.config.runLease) / 3, partsHoldMs(deps) / 4);
  const timer = setInterval(() => {
    void holdJob(deps, db, request, runId).catch(() => {});
    void also?.().catch(() => {});
  }, everyMs);
  return () => clearInterval(timer);
}
