/**
 * Per-tenant run slots: at most `cap` runs of one tenant's jobs at once across every
 * runner (`SLUICE_TENANT_RUN_CAP`), so one tenant with many due jobs cannot take every
 * runner instance. The slots are `cap` documents `tenants/{tenant}/run-slots/{0..cap-1}`,
 * each free, expired, or held by one run until `expires_at_ms`. Its holder renews it while
 * the run goes on (`SLUICE_RUN_LEASE`), so a runner that died gives its slot back within a
 * lease.
 *
 * A slot is taken by a read and a write on condition that it is still as read
 * (adapters/conditional-write.ts), not in a transaction: a runner killed inside a
 * transaction that counted the tenant's slots locked all of them for a minute, and every
 * run of the tenant failed meanwhile.
 *
 * @example
 *   const slot = await takeRunSlot(db, 'acme', owner, { cap: 4, untilMs });
 *   if (slot) try { ...; await slot.renew(untilMs) } finally { await slot.free(); }
 */
import type { DocumentReference, DocumentSnapshot, Firestore, Timestamp } from '@google-cloud/firestore';
import { deleteIfUnchanged, writeIfUnchanged } from '../adapters/conditional-write.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';

export interface RunSlot {
  /** Keeps the slot until `untilMs`; false once it is no longer ours (it expired and was taken). */
  renew(untilMs: number): Promise<boolean>;
  /** Gives the slot back (nothing if it is no longer ours). */
  free(): Promise<void>;
}

/** Takes a free or expired slot of the tenant (or renews the one `owner` holds); undefined at the cap. */
export async function takeRunSlot(
  db: Firestore,
  tenant: string,
  owner: string,
  slot: { cap: number; untilMs: number; nowMs?: number },
): Promise<RunSlot | undefined> {
  if (slot.cap < 1) return undefined;
  const now = slot.nowMs ?? Date.now();
  const snapshots = await slotSnapshots(db, tenant, slot.cap);
  const live = (s: DocumentSnapshot) => heldUntil(s) > now;
  const mine = snapshots.find((s) => live(s) && s.get('owner') === owner);
  // Runners asking at once start at different slots, so that most first tries succeed.
  const free = snapshots.filter((s) => !live(s));
  const start = Math.floor(Math.random() * free.length);
  const candidates = mine ? [mine] : [...free.slice(start), ...free.slice(0, start)];
  for (const snapshot of candidates) {
    const written = await writeIfUnchanged(snapshot.ref, snapshot, { owner, expires_at_ms: slot.untilMs });
    if (written) return heldSlot(snapshot.ref, written.writeTime);
  }
  return undefined;
}

function heldSlot(ref: DocumentReference, writtenAt: Timestamp): RunSlot {
  // Our last write's time: a slot written since by anyone else is no longer ours. Changes
  // go one after the other, each conditional on the one before.
  let last: Timestamp | undefined = writtenAt;
  let queue: Promise<unknown> = Promise.resolve();
  const next = <T>(change: () => Promise<T>): Promise<T> => {
    const done = queue.then(change);
    queue = done.catch(() => {});
    return done;
  };
  return {
    renew: (untilMs) =>
      next(async () => {
        if (!last) return false;
        last = (await writeIfUnchanged(ref, last, { expires_at_ms: untilMs }))?.writeTime;
        return last !== undefined;
      }),
    free: () =>
      next(async () => {
        if (!last) return;
        const mine = last;
        last = undefined;
        await deleteIfUnchanged(ref, mine);
      }),
  };
}

/** How many of the tenant's slots are held now. */
export async function liveRunSlots(
  db: Firestore,
  tenant: string,
  cap: number,
  nowMs = Date.now(),
): Promise<number> {
  if (cap < 1) return 0;
  return (await slotSnapshots(db, tenant, cap)).filter((s) => heldUntil(s) > nowMs).length;
}

/** The tenant's `cap` slot documents, read at once. */
function slotSnapshots(db: Firestore, tenant: string, cap: number) {
  const slots = tenantCollection(db, tenant, 'run-slots');
  return db.getAll(...Array.from({ length: cap }, (_, i) => slots.doc(String(i))));
}

function heldUntil(slot: DocumentSnapshot): number {
  return (slot.get('expires_at_ms') as number | undefined) ?? 0;
}
