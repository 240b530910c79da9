/**
 * A Firestore lease per job, so that two runners (a request delivered twice, or a tick's
 * request and a continuation) never run the same job at once: taken if free, expired, or
 * already ours (taking it again renews it), released and handed on by its owner only.
 *
 * Each change is a read and a write on condition that the lease is still as read
 * (adapters/conditional-write.ts), never a transaction: a runner killed mid-transaction
 * would leave the lease document locked for a minute, and the job with it.
 *
 * @example
 *   if ((await acquireLease(db, path, { owner, untilMs })).acquired) { ...; await releaseLease(db, path, owner); }
 */
import type { DocumentReference, DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { changeDocument, writeAsRead } from '../adapters/conditional-write.ts';

type LeaseAnswer = { acquired: true } | { acquired: false; expiresAtMs: number };

export async function acquireLease(
  db: Firestore,
  path: string,
  lease: { owner: string; untilMs: number; nowMs?: number },
): Promise<LeaseAnswer> {
  const ref = db.doc(path);
  return changeLease<LeaseAnswer>(ref, (snapshot) => {
    const now = lease.nowMs ?? Date.now();
    const holder = snapshot.get('owner') as string | undefined;
    const expires = (snapshot.get('expires_at_ms') as number | undefined) ?? 0;
    if (snapshot.exists && holder !== lease.owner && expires > now)
      return { answer: { acquired: false as const, expiresAtMs: expires } };
    return {
      answer: { acquired: true as const },
      write: {
        owner: lease.owner,
        expires_at_ms: lease.untilMs,
        acquired_at:
          (holder === lease.owner ? snapshot.get('acquired_at') : undefined) ?? new Date(now).toISOString(),
      },
    };
  });
}

/** Moves our lease's expiry to `untilMs`; does nothing once it is no longer ours (released, or taken after it expired). */
export async function renewLease(db: Firestore, path: string, owner: string, untilMs: number): Promise<void> {
  await changeLease(db.doc(path), (snapshot) =>
    snapshot.get('owner') === owner
      ? { answer: undefined, write: { ...snapshot.data(), expires_at_ms: untilMs } }
      : { answer: undefined },
  );
}

export async function releaseLease(db: Firestore, path: string, owner: string): Promise<void> {
  await changeLease(db.doc(path), (snapshot) =>
    snapshot.get('owner') === owner ? { answer: undefined, write: 'delete' } : { answer: undefined },
  );
}

/** Gives a lease we hold to another owner, until `untilMs`; false when it was not ours (any more). */
export async function handLease(
  db: Firestore,
  path: string,
  owner: string,
  to: { owner: string; untilMs: number },
): Promise<boolean> {
  return changeLease(db.doc(path), (snapshot) =>
    snapshot.exists && snapshot.get('owner') === owner
      ? {
          answer: true,
          write: { owner: to.owner, expires_at_ms: to.untilMs, acquired_at: new Date().toISOString() },
        }
      : { answer: false },
  );
}

/**
 * Keeps a lease `owner` holds (even one past its expiry that nobody took since) until
 * `untilMs`, writing only when less than `renewWithinMs` of it is left: many holders of one
 * lease (the parts of a run, functions/runs/shards.ts) then write it seldom. False when the
 * lease is not `owner`'s: released, or taken by another after it expired.
 */
export async function holdLease(
  db: Firestore,
  path: string,
  owner: string,
  hold: { untilMs: number; renewWithinMs: number; nowMs?: number },
): Promise<boolean> {
  return changeLease(db.doc(path), (snapshot) => {
    if (!snapshot.exists || snapshot.get('owner') !== owner) return { answer: false };
    const left = ((snapshot.get('expires_at_ms') as number | undefined) ?? 0) - (hold.nowMs ?? Date.now());
    if (left >= hold.renewWithinMs) return { answer: true };
    return { answer: true, write: { ...snapshot.data(), expires_at_ms: hold.untilMs } };
  });
}

/** Reads the lease, decides, and writes on condition it has not changed; again if it had. */
function changeLease<T>(
  ref: DocumentReference,
  decide: (snapshot: DocumentSnapshot) => { answer: T; write?: Record<string, unknown> | 'delete' },
): Promise<T> {
  return changeDocument(ref, async (snapshot) => {
    const { answer, write } = decide(snapshot);
    // A lease is deleted only by its holder: it exists as read.
    if (write === 'delete') await ref.delete({ lastUpdateTime: snapshot.updateTime! });
    else if (write) await writeAsRead(ref, snapshot, write);
    return answer;
  });
}
