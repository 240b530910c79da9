/**
 * Context maps in Firestore: one document per scope under `tenants/{tenant}/contexts/`
 * (`global`, `worker:<id>`, `job:<name>`). The map is stored as JSON text, which keeps
 * nested arrays (Firestore refuses arrays of arrays), depth up to 32 and key order.
 *
 * Every update is one transaction that reads, merges, writes, bumps the scope's version,
 * records a `context-changed` event and, for scopes that reach workers, puts the
 * notification in the outbox: the change and its notification commit together. The
 * event's payload: `scope`, `worker` or `job`, `version`, `keys` (the keys the update
 * named), `mode` (`merge` or `replace`) and, for a replace, `removed` (the keys it deleted).
 *
 * A worker's or job's map goes with the worker or job (`readForRemoval`, inside the
 * transaction that deletes it).
 */
import type { Firestore, Transaction } from '@google-cloud/firestore';
import type { ContextMap } from '../../shared/context/map.ts';
import { assertMapSize } from '../../shared/context/map.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import { appendEventIn, buildEvent } from '../events/event-log.ts';
import { enqueueMessage, type OutboxEntry } from '../messaging/outbox.ts';

export type ContextScope =
  | { kind: 'global' }
  | { kind: 'worker'; id: string }
  | { kind: 'job'; name: string };

interface StoredContext {
  values_json: string;
  version: number;
  updated_at: string;
}

/**
 * What an update did, for its `context-changed` event: `merge` (key by key, `null` deletes)
 * or `replace` (the map replaced wholesale), and the keys the update named (for a replace,
 * the keys of the new map).
 */
export interface ContextUpdate {
  mode: 'merge' | 'replace';
  keys: string[];
}

export interface ContextChange {
  context: ContextMap;
  version: number;
  /** The outbox entry to deliver after commit (global and worker scopes). */
  outbox?: { id: string; entry: OutboxEntry };
}

export function scopeDocId(scope: ContextScope): string {
  if (scope.kind === 'global') return 'global';
  return scope.kind === 'worker' ? `worker:${scope.id}` : `job:${scope.name}`;
}

export class ContextStore {
  constructor(readonly db: Firestore) {}

  private ref(tenant: string, scope: ContextScope) {
    return tenantCollection(this.db, tenant, 'contexts').doc(scopeDocId(scope));
  }

  async read(tenant: string, scope: ContextScope, tx?: Transaction): Promise<ContextMap> {
    const ref = this.ref(tenant, scope);
    return parse((await (tx ? tx.get(ref) : ref.get())).data() as StoredContext | undefined);
  }

  /**
   * Several scopes in one round trip (for resolution). Inside a transaction that decides
   * something from them, pass it: the decision then holds for the maps it was made on.
   */
  async readMany(tenant: string, scopes: ContextScope[], tx?: Transaction): Promise<ContextMap[]> {
    const refs = scopes.map((scope) => this.ref(tenant, scope));
    const snaps = tx ? await tx.getAll(...refs) : await this.db.getAll(...refs);
    return snaps.map((snap) => parse(snap.data() as StoredContext | undefined));
  }

  /**
   * Applies `change` to the stored map atomically; `update` says how and which keys the
   * caller named, for the event (a replace's event also lists the keys it removed).
   */
  async update(
    tenant: string,
    scope: ContextScope,
    change: (current: ContextMap) => ContextMap,
    update: ContextUpdate,
  ): Promise<ContextChange> {
    // Updates of one map from this instance queue up instead of contending in Firestore;
    // the transaction still protects against other instances.
    return await serialized(`${tenant}/${scopeDocId(scope)}`, () =>
      this.transact(tenant, scope, change, update),
    );
  }

  /**
   * Deletes the map of a worker or job inside the transaction that deletes the worker or
   * job, so one made later under the same id or name starts with none. Reads now (a
   * transaction reads everything before it writes) and returns the writes, to call after
   * the caller's other reads: the delete, and a `context-changed` event (a replace that
   * removed every key) when there was a map. Nobody is told: the worker is going, and a
   * job's map reaches workers only when the job is staged.
   */
  async readForRemoval(
    tx: Transaction,
    tenant: string,
    scope: Exclude<ContextScope, { kind: 'global' }>,
  ): Promise<() => void> {
    const ref = this.ref(tenant, scope);
    const stored = (await tx.get(ref)).data() as StoredContext | undefined;
    return () => {
      if (!stored) return;
      tx.delete(ref);
      appendEventIn(tx, this.db, tenant, {
        type: 'context-changed',
        source: 'server',
        ...eventIds(scope),
        payload: {
          scope: scope.kind,
          ...scopeIds(scope),
          version: stored.version + 1,
          keys: [],
          mode: 'replace',
          removed: Object.keys(parse(stored)),
        },
      });
    };
  }

  private async transact(
    tenant: string,
    scope: ContextScope,
    change: (current: ContextMap) => ContextMap,
    update: ContextUpdate,
  ): Promise<ContextChange> {
    return await this.db.runTransaction(
      async (tx) => {
        const ref = this.ref(tenant, scope);
        const stored = (await tx.get(ref)).data() as StoredContext | undefined;
        const current = parse(stored);
        const next = change(current);
        assertMapSize(next);
        const version = (stored?.version ?? 0) + 1;
        tx.set(ref, {
          values_json: JSON.stringify(next),
          version,
          updated_at: new Date().toISOString(),
        } satisfies StoredContext);
        const payload = {
          scope: scope.kind,
          ...scopeIds(scope),
          version,
          keys: update.keys,
          mode: update.mode,
          // A replace names the keys of the new map: say which of the old ones it deleted.
          ...(update.mode === 'replace'
            ? { removed: Object.keys(current).filter((key) => !Object.hasOwn(next, key)) }
            : {}),
        };
        appendEventIn(tx, this.db, tenant, {
          type: 'context-changed',
          source: 'server',
          ...eventIds(scope),
          payload,
        });
        const outbox = scope.kind === 'job' ? undefined : this.enqueue(tx, tenant, scope, version, next);
        return { context: next, version, ...(outbox ? { outbox } : {}) };
      },
      { maxAttempts: 30 },
    );
  }

  private enqueue(
    tx: Transaction,
    tenant: string,
    scope: ContextScope,
    version: number,
    context: ContextMap,
  ) {
    const message: SluiceEvent = buildEvent({
      type: 'context-changed',
      source: 'server',
      ...eventIds(scope),
      payload: { scope: scope.kind, ...scopeIds(scope), version, context },
    });
    return enqueueMessage(
      tx,
      this.db,
      scope.kind === 'worker' ? { tenant, worker: scope.id } : { tenant },
      message,
    );
  }
}

const queues = new Map<string, Promise<unknown>>();

function serialized<T>(key: string, run: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(run, run);
  const settled = next.catch(() => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return next;
}

function parse(stored: StoredContext | undefined): ContextMap {
  return stored ? (JSON.parse(stored.values_json) as ContextMap) : {};
}

function scopeIds(scope: ContextScope): Record<string, string> {
  if (scope.kind === 'worker') return { worker: scope.id };
  if (scope.kind === 'job') return { job: scope.name };
  return {};
}

function eventIds(scope: ContextScope): { worker?: string; job?: string } {
  return scopeIds(scope);
}
