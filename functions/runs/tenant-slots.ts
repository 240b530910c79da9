/**
 * Per-tenant run slots: at most `cap` runs of one tenant's jobs at once across every
 * runner (`SLUICE_TENANT_RUN_CAP`), so one tenant with many due jobs cannot take every
 * runner instance. A slot is a document `tenants/{tenant}/run-slots/{owner}` taken in a
 * transaction that counts the unexpired ones. Its holder renews it while the run goes on
 * (`SLUICE_RUN_LEASE`), so a runner that died gives its slots back within a lease.
 *
 * @example
 *   if (await takeRunSlot(db, 'acme', owner, { cap: 4, untilMs })) try { ... } finally { await freeRunSlot(db, 'acme', owner); }
 */
import type { Firestore } from '@google-cloud/firestore';
import { tenantCollection } from '../adapters/firestore-paths.ts';

export async function takeRunSlot(
  db: Firestore,
  tenant: string,
  owner: string,
  slot: { cap: number; untilMs: number; nowMs?: number },
): Promise<boolean> {
  const slots = tenantCollection(db, tenant, 'run-slots');
  const now = slot.nowMs ?? Date.now();
  return db.runTransaction(async (tx) => {
    const held = await tx.get(slots.where('expires_at_ms', '>', now));
    if (held.docs.filter((doc) => doc.id !== owner).length >= slot.cap) return false;
    tx.set(slots.doc(owner), { expires_at_ms: slot.untilMs });
    return true;
  });
}

export async function freeRunSlot(db: Firestore, tenant: string, owner: string): Promise<void> {
  await tenantCollection(db, tenant, 'run-slots').doc(owner).delete();
}

export async function renewRunSlot(
  db: Firestore,
  tenant: string,
  owner: string,
  untilMs: number,
): Promise<void> {
  await tenantCollection(db, tenant, 'run-slots').doc(owner).update({ expires_at_ms: untilMs });
}
