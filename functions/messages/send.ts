/**
 * A user message: recorded in the tenant's event log and sent, in the same transaction
 * through the outbox, to its audience (one worker, or all of the tenant's), where
 * `message`-triggered inputs whose filters match run. A worker that does not exist is a
 * 404, and nothing is recorded or sent.
 */
import type { Firestore, Transaction } from '@google-cloud/firestore';
import { ApiError } from '../../shared/errors.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import type { AppDeps } from '../app/deps.ts';
import { buildEvent, eventsCollection, storedEvent } from '../events/event-log.ts';
import { deliver, enqueueMessage } from '../messaging/outbox.ts';
import { unknownWorkers } from '../workers/registry.ts';
import { unstorable } from './payload.ts';

export interface UserMessage {
  type: 'user-generated' | 'user-alert' | 'user-notification';
  tags: string[];
  payload: Record<string, unknown>;
  job?: string | undefined;
  /** Only this worker; absent: every worker of the tenant. */
  worker?: string | undefined;
}

export async function sendMessage(deps: AppDeps, tenant: string, message: UserMessage): Promise<SluiceEvent> {
  const db = await deps.clients.firestore();
  const event = buildEvent({
    type: message.type,
    source: 'server',
    tags: message.tags,
    payload: message.payload,
    ...(message.job ? { job: message.job } : {}),
    ...(message.worker ? { worker: message.worker } : {}),
  });
  const queued = await db
    .runTransaction(async (tx) => {
      // As a deploy: a message to a worker that does not exist would be dropped unseen.
      if (message.worker) await assertWorkerExists(db, tenant, message.worker, tx);
      tx.set(eventsCollection(db, tenant).doc(event.id), storedEvent(event));
      return enqueueMessage(tx, db, { tenant, ...(message.worker ? { worker: message.worker } : {}) }, event);
    })
    .catch((err: unknown) => {
      throw unstorable(err, 'this message');
    });
  await deliver(deps, queued.id, queued.entry);
  return event;
}

/** 404 naming a worker that does not exist (built-in workers always do), read in `tx`. */
async function assertWorkerExists(db: Firestore, tenant: string, worker: string, tx: Transaction) {
  const missing = await unknownWorkers(db, tenant, [worker], tx);
  if (missing.length)
    throw new ApiError('not_found', `unknown worker: ${worker}`, {
      details: [{ path: 'worker', message: `no worker ${worker}` }],
    });
}
