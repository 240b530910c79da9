/**
 * Sets or deletes a secret and tells every worker of the tenant, atomically through the
 * outbox: `job-credentials-invalidated`, naming the secret (never its value). A worker
 * reads its jobs again and restarts those whose values changed (a rotated credential is
 * used from then on), or stops those whose secret is gone, saying why. The `cloud` worker
 * resolves secrets at every run and needs no message.
 */
import type { AppDeps } from '../app/deps.ts';
import { buildEvent } from '../events/event-log.ts';
import { deliver, enqueueMessage } from '../messaging/outbox.ts';
import { SecretStore } from './store.ts';

/** Sets (or, with `null`, deletes) `scope/name`; false when there was nothing to delete. */
export async function changeSecret(
  deps: AppDeps,
  tenant: string,
  scope: string,
  name: string,
  value: string | null,
): Promise<boolean> {
  const db = await deps.clients.firestore();
  const store = new SecretStore(db, deps.config.secretsKey);
  const queued = await db.runTransaction(async (tx) => {
    if (value === null) {
      if (!(await store.deleteIn(tx, tenant, scope, name))) return undefined;
    } else store.putIn(tx, tenant, scope, name, value);
    return enqueueMessage(
      tx,
      db,
      { tenant },
      buildEvent({
        type: 'job-credentials-invalidated',
        source: 'server',
        payload: { secret: `${scope}/${name}`, change: value === null ? 'deleted' : 'set' },
      }),
    );
  });
  if (queued) await deliver(deps, queued.id, queued.entry);
  return queued !== undefined;
}
