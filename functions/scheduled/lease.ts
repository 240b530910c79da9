/**
 * A Firestore lease per job, so that two runners (a request delivered twice, or a tick's
 * request and a continuation) never run the same job at once. Taken in a transaction:
 * free, expired, or already ours (taking it again renews it). Released by its owner only.
 *
 * @example
 *   if ((await acquireLease(db, path, { owner, untilMs })).acquired) { ...; await releaseLease(db, path, owner); }
 */
import type { Firestore } from '@google-cloud/firestore';

export async function acquireLease(
  db: Firestore,
  path: string,
  lease: { owner: string; untilMs: number; nowMs?: number },
): Promise<{ acquired: true } | { acquired: false; expiresAtMs: number }> {
  const ref = db.doc(path);
  return db.runTransaction(async (tx) => {
    const snapshot = await tx.get(ref);
    const now = lease.nowMs ?? Date.now();
    const holder = snapshot.get('owner') as string | undefined;
    const expires = (snapshot.get('expires_at_ms') as number | undefined) ?? 0;
    if (snapshot.exists && holder !== lease.owner && expires > now)
      return { acquired: false as const, expiresAtMs: expires };
    tx.set(ref, {
      owner: lease.owner,
      expires_at_ms: lease.untilMs,
      acquired_at: holder === lease.owner ? snapshot.get('acquired_at') : new Date(now).toISOString(),
    });
    return { acquired: true as const };
  });
}

export async function releaseLease(db: Firestore, path: string, owner: string): Promise<void> {
  const ref = db.doc(path);
  await db.runTransaction(async (tx) => {
    const snapshot = await tx.get(ref);
    if (snapshot.exists && snapshot.get('owner') === owner) tx.delete(ref);
  });
}

/** Gives a lease we hold to another owner, until `untilMs`. */
export async function handLease(
  db: Firestore,
  path: string,
  owner: string,
  to: { owner: string; untilMs: number },
): Promise<void> {
  const ref = db.doc(path);
  await db.runTransaction(async (tx) => {
    const snapshot = await tx.get(ref);
    if (!snapshot.exists || snapshot.get('owner') !== owner) return;
    tx.set(ref, { owner: to.owner, expires_at_ms: to.untilMs, acquired_at: new Date().toISOString() });
  });
}
