/**
 * The outbox of messages to workers. A context change writes its notification here in
 * the same transaction; after the commit the notification is published and the entry
 * deleted. If publishing fails, the entry stays and `drainOutbox` (a periodic task in
 * the local stack, a scheduled function in the cloud) publishes it later: no change is
 * ever left unannounced. Delivery is at least once; workers drop stale versions.
 */
import type { Firestore, Transaction } from '@google-cloud/firestore';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import { collectionGroup, tenantCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { type Audience, publishToWorkers } from './worker-channel.ts';

export interface OutboxEntry {
  tenant: string;
  audience: Audience;
  /** The event as JSON text: context values may hold arrays of arrays, which Firestore refuses. */
  message_json: string;
  created_at: string;
}

export function outboxEntry(tenant: string, audience: Audience, message: SluiceEvent): OutboxEntry {
  return { tenant, audience, message_json: JSON.stringify(message), created_at: new Date().toISOString() };
}

/** Entries younger than this are left to the request that wrote them. */
const DRAIN_AFTER_MS = 5_000;

/** Puts a message for workers in the outbox inside a transaction; deliver it after the commit. */
export function enqueueMessage(
  tx: Transaction,
  db: Firestore,
  audience: Audience,
  message: SluiceEvent,
): { id: string; entry: OutboxEntry } {
  const entry = outboxEntry(audience.tenant, audience, message);
  const ref = outboxCollection(db, audience.tenant).doc(`${message.id}-${audience.worker ?? 'all'}`);
  tx.set(ref, entry);
  return { id: ref.id, entry };
}

export function outboxCollection(db: Firestore, tenant: string) {
  return tenantCollection(db, tenant, 'outbox');
}

/** Publishes one entry and removes it; on failure the entry stays for `drainOutbox`. */
export async function deliver(deps: AppDeps, id: string, entry: OutboxEntry): Promise<boolean> {
  try {
    await publishToWorkers(
      await deps.clients.pubsub(),
      entry.audience,
      JSON.parse(entry.message_json) as object,
    );
    await outboxCollection(await deps.clients.firestore(), entry.tenant)
      .doc(id)
      .delete();
    return true;
  } catch (err) {
    deps.logger.warn({ err, outbox: id }, 'publishing a worker message failed; it stays in the outbox');
    return false;
  }
}

/** Publishes every entry older than a few seconds, oldest first. Returns how many were delivered. */
export async function drainOutbox(deps: AppDeps): Promise<number> {
  const db = await deps.clients.firestore();
  const cutoff = new Date(Date.now() - DRAIN_AFTER_MS).toISOString();
  const snap = await collectionGroup(db, 'outbox')
    .where('created_at', '<', cutoff)
    .orderBy('created_at')
    .limit(500)
    .get();
  let delivered = 0;
  for (const doc of snap.docs) if (await deliver(deps, doc.id, doc.data() as OutboxEntry)) delivered++;
  return delivered;
}
