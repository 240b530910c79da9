/**
 * Variables in Firestore (`tenants/{tenant}/variables/{name}`): the values `${dyn|NAME}`
 * resolves to on a worker. The routes change them here; the worker API and the cloud
 * worker read them here.
 */
import type { Firestore } from '@google-cloud/firestore';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { appendEventIn, buildEvent } from '../events/event-log.ts';
import { deliver, enqueueMessage } from '../messaging/outbox.ts';

export function variablesCollection(db: Firestore, tenant: string) {
  return tenantCollection(db, tenant, 'variables');
}

/**
 * Sets (or, with `null`, deletes) a variable with its event and the `update-variable`
 * message to every worker, atomically. Returns false when there was nothing to delete.
 */
export async function changeVariable(
  deps: AppDeps,
  tenant: string,
  name: string,
  value: string | null,
): Promise<boolean> {
  const db = await deps.clients.firestore();
  const ref = variablesCollection(db, tenant).doc(name);
  const result = await db.runTransaction(async (tx) => {
    const existed = (await tx.get(ref)).exists;
    if (value === null && !existed) return undefined;
    if (value === null) tx.delete(ref);
    else tx.set(ref, { name, value, updated_at: new Date().toISOString() });
    // Values are not secret, but events stay small: the event names the variable only.
    appendEventIn(tx, db, tenant, {
      type: value === null ? 'variable-deleted' : 'variable',
      source: 'server',
      payload: { name },
    });
    return enqueueMessage(
      tx,
      db,
      { tenant },
      buildEvent({ type: 'update-variable', source: 'server', payload: { name } }),
    );
  });
  if (result) await deliver(deps, result.id, result.entry);
  return result !== undefined;
}
