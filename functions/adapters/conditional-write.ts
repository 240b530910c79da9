/**
 * Writes that happen only if a document is still as it was read: created if it did not
 * exist, changed or deleted only if its update time is the one read. What leases and run
 * slots use instead of transactions.
 *
 * Why not a transaction: a transaction's reads lock what they read until it commits, and a
 * process killed between its read and its commit leaves those locks to expire with the
 * transaction, about 60 s later (Firestore's idle timeout; the emulator measured 62 s).
 * Meanwhile every other transaction on those documents fails with "Transaction lock
 * timeout": a runner killed while renewing a job's lease held that job, and one killed while
 * taking a tenant's run slot held every job of the tenant, for a minute. A plain read and a
 * conditional write leave nothing behind whenever the process dies.
 *
 * @example
 *   const snapshot = await ref.get();
 *   if (!(await writeIfUnchanged(ref, snapshot, { owner: 'me' }))) return; // another write came first
 *   // read, write on condition, read again if another write came first:
 *   await changeDocument(ref, (snapshot) => writeAsRead(ref, snapshot, { n: (snapshot.get('n') ?? 0) + 1 }));
 */
import type {
  DocumentData,
  DocumentReference,
  DocumentSnapshot,
  Timestamp,
  WriteResult,
} from '@google-cloud/firestore';

/** gRPC codes of a write whose condition failed: NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION. */
const CONFLICTS = new Set([5, 6, 9]);

/** Reads of a document that keeps changing under us before `changeDocument` gives up. */
const CHANGE_ATTEMPTS = 5;

/**
 * Reads the document and hands it to `change`, which writes on condition that it is still
 * as read (`writeAsRead`, or a write with `snapshot.updateTime` as its precondition). When
 * another write came first (the write fails with a conflict), reads again and hands it
 * over again, up to CHANGE_ATTEMPTS times; then the conflict is thrown.
 */
export async function changeDocument<T>(
  ref: DocumentReference,
  change: (snapshot: DocumentSnapshot) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const snapshot = await ref.get();
    try {
      return await change(snapshot);
    } catch (err) {
      if (!isWriteConflict(err) || attempt === CHANGE_ATTEMPTS) throw err;
    }
  }
}

/**
 * Writes `data`'s fields if the document is as `snapshot` read it (or last written at
 * `snapshot`, a time this process wrote it), creating it if it did not exist; fails with a
 * conflict (`isWriteConflict`) if another write came first. Fields `data` does not name
 * are kept.
 */
export function writeAsRead(
  ref: DocumentReference,
  snapshot: DocumentSnapshot | Timestamp,
  data: DocumentData,
): Promise<WriteResult> {
  const updated = 'exists' in snapshot ? (snapshot.exists ? snapshot.updateTime : undefined) : snapshot;
  return updated ? ref.update(data, { lastUpdateTime: updated }) : ref.create(data);
}

/** `writeAsRead`, with undefined instead of the conflict when another write came first. */
export async function writeIfUnchanged(
  ref: DocumentReference,
  snapshot: DocumentSnapshot | Timestamp,
  data: DocumentData,
): Promise<WriteResult | undefined> {
  return conflictAsUndefined(writeAsRead(ref, snapshot, data));
}

/** Deletes the document if it is as `snapshot` read it (or last written at that time); false if another write came first. */
export async function deleteIfUnchanged(
  ref: DocumentReference,
  snapshot: DocumentSnapshot | Timestamp,
): Promise<boolean> {
  const updated = 'exists' in snapshot ? snapshot.updateTime : snapshot;
  if (!updated) return true;
  return (await conflictAsUndefined(ref.delete({ lastUpdateTime: updated }))) !== undefined;
}

/** Whether a write failed because its condition did: the document had changed since it was read. */
export function isWriteConflict(err: unknown): boolean {
  return CONFLICTS.has((err as { code?: number } | undefined)?.code ?? -1);
}

async function conflictAsUndefined(write: Promise<WriteResult>): Promise<WriteResult | undefined> {
  try {
    return await write;
  } catch (err) {
    if (isWriteConflict(err)) return undefined;
    throw err;
  }
}
