/**
 * Deletes expired events where no TTL policy does it: the Firestore emulator of the local
 * stack and the tests (in the cloud the policy on `events.expires_at` does it, see
 * terraform/firestore.tf, and this is never run). Bounded: at most `limit` events a run,
 * so a tick stays short; a backlog goes over several ticks.
 */
import type { AppDeps } from '../app/deps.ts';
import { eventsCollection } from './event-log.ts';

export async function sweepExpiredEvents(deps: AppDeps, limit = 500): Promise<number> {
  const db = await deps.clients.firestore();
  const now = new Date();
  let left = limit;
  for (const tenant of await db.collection('tenants').listDocuments()) {
    if (left <= 0) break;
    const snap = await eventsCollection(db, tenant.id).where('expires_at', '<=', now).limit(left).get();
    if (snap.empty) continue;
    const batch = db.batch();
    for (const doc of snap.docs) batch.delete(doc.ref);
    await batch.commit();
    left -= snap.size;
  }
  return limit - left;
}

/** True where Firestore has no TTL policies to run (the emulator). */
export function withoutFirestoreTtl(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.FIRESTORE_EMULATOR_HOST;
}
