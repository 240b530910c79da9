/**
 * A Firestore lease per job, so that two scheduled ticks (overlapping invocations, or
 * two regions) never run the same job at once. Taken in a transaction: free, expired,
 * or already ours. Released by its owner only.
 *
 * @example
 *   if (await acquireLease(db, path, { owner, untilMs })) { ...; await releaseLease(db, path, owner); }
 */
import type { Firestore } from '@google-cloud/firestore';

export async function acquireLease(
  db: Firestore,
  path: string,
  lease: { owner: string; untilMs: number; nowMs?: number },
): Promise<boolean> {
  const ref = db.doc(path);
  return db.runTransaction(async (tx) => {
    const snapshot = await tx.get(ref);
    const now = lease.nowMs ?? Date.now();
    const holder = snapshot.get('owner') as string | undefined;
    const expires = (snapshot.get('expires_at_ms') as number | undefined) ?? 0;
    if (snapshot.exists && holder !== lease.owner && expires > now) return false;
    tx.set(ref, {
      owner: lease.owner,
      expires_at_ms: lease.untilMs,
      acquired_at: new Date(now).toISOString(),
    });
    return true;
  });
}

export async function releaseLease(db: Firestore, path: string, owner: string): Promise<void> {
  const ref = db.doc(path);
  await db.runTransaction(async (tx) => {
    const snapshot = await tx.get(ref);
    if (snapshot.exists && snapshot.get('owner') === owner) tx.delete(ref);
  });
}
