/**
 * The per-worker quota of telemetry events (`POST /api/worker/events`): a token bucket of
 * TELEMETRY_BURST events refilled at TELEMETRY_PER_SECOND, kept in one document per worker
 * (`tenants/{tenant}/telemetry-quotas/{worker}`) and spent inside the transaction that
 * writes the batch, so the limit holds across function instances and a refused batch
 * writes nothing and spends nothing.
 */
import type { DocumentReference, Firestore, Transaction } from '@google-cloud/firestore';
import { ApiError } from '../../shared/errors.ts';
import { type BucketLevel, spendTokens } from '../../shared/token-bucket.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';

/** Two full requests of 500 events at once; the worker runtime flushes 500 a heartbeat. */
export const TELEMETRY_BURST = 1_000;
export const TELEMETRY_PER_SECOND = 20;

export function telemetryQuotaRef(db: Firestore, tenant: string, worker: string): DocumentReference {
  return tenantCollection(db, tenant, 'telemetry-quotas').doc(worker);
}

/** Reads the worker's bucket; call with the transaction's other reads, before any write. */
export async function readTelemetryQuota(tx: Transaction, ref: DocumentReference) {
  const level = (await tx.get(ref)).data() as BucketLevel | undefined;
  return {
    /** Spends `events` tokens (a write of the transaction), or throws 429 with Retry-After. */
    spend(events: number, now = Date.now()): void {
      const spent = spendTokens(level, events, now, {
        burst: TELEMETRY_BURST,
        perSecond: TELEMETRY_PER_SECOND,
      });
      if (!spent.ok)
        throw new ApiError(
          'rate_limited',
          `this worker sent more than its telemetry quota (${TELEMETRY_BURST} events, ${TELEMETRY_PER_SECOND} a second); nothing of this batch was written`,
          { retryAfter: spent.retryAfterSeconds },
        );
      tx.set(ref, spent.level);
    },
  };
}
