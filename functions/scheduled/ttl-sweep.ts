/**
 * Documents that expire, declared once: each collection (or collection group) whose
 * documents carry an expiry field. In the cloud a Firestore TTL policy per entry deletes
 * them (terraform/firestore.tf; `npm run check:deploy` reads this list to check that every
 * policy exists). Where no TTL policy runs (the Firestore emulator of the local stack and
 * the tests), `sweepExpired` does it: a bounded batch per tick, so a tick stays short and
 * a backlog goes over several ticks.
 */
import type { Firestore } from '@google-cloud/firestore';
import { type CollectionId, collectionGroup } from '../adapters/firestore-paths.ts';

export const EXPIRING_COLLECTIONS = [
  { collection: 'fingerprints', field: 'expires_at' },
  { collection: 'rate-limit-failures', field: 'expires_at' },
  { collection: 'events', field: 'expires_at' },
  { collection: 'stream-tickets', field: 'expires_at' },
  // The counter documents of runs read in parts (runs/shards.ts), a day after their last
  // change: a run whose parts were lost does not keep its document for ever.
  { collection: 'runs', field: 'expires_at' },
  // Run requests parked for a slot of their tenant (runs/parked-runs.ts), should one be left.
  { collection: 'parked-runs', field: 'expires_at' },
] as const satisfies readonly { collection: CollectionId; field: string }[];

/** Deletes at most `limit` expired documents across every expiring collection; returns how many. */
export async function sweepExpired(db: Firestore, limit = 500, now = new Date()): Promise<number> {
  let left = limit;
  for (const { collection, field } of EXPIRING_COLLECTIONS) {
    if (left <= 0) break;
    // A collection group: fingerprints and events live under each tenant (and job).
    const snap = await collectionGroup(db, collection).where(field, '<=', now).limit(left).get();
    if (snap.empty) continue;
    const batch = db.batch();
    for (const doc of snap.docs) batch.delete(doc.ref);
    await batch.commit();
    left -= snap.size;
  }
  return limit - left;
}

/** True where Firestore runs no TTL policies (the emulator). */
export function withoutFirestoreTtl(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.FIRESTORE_EMULATOR_HOST;
}
