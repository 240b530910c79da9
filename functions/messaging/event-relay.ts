/**
 * The relay that makes every recorded event visible to `message` triggers: each event
 * appended to a tenant's log (`tenants/{t}/events`) is sent to the workers whose deployed
 * message triggers can match it, with its true `source`, `kind` and `type`. Job chaining
 * rests on it: job B with `filter-type: [job-run-ended], filter-job: A` runs when A ends.
 *
 * What each worker listens for is kept per job in `tenants/{t}/message-routes/{job}`,
 * written by the job lifecycle (functions/jobs/deployments.ts) in the transaction that
 * stages, deploys or undeploys it. Routing by those filters on the server keeps fan-out
 * cheap (the Pub/Sub emulator ignores subscription filters, and a filter per trigger
 * would not fit one subscription per worker anyway).
 *
 * New events reach the relay two ways: in the cloud, Eventarc calls the `event-relay`
 * function for each document created under `tenants/{t}/events/` (functions/entry/
 * event-relay.ts); in the local stack and the tests, `startEventRelay` listens to the
 * log. Both call `relayEvents`. Delivery is at least once; a worker's triggers see each
 * event as a message, and a trigger's `limit` counts the runs it starts.
 */
import type { Firestore, Transaction } from '@google-cloud/firestore';
import type { MessageFilter } from '../../shared/events/filter.ts';
import { messageFiltersOf, routeMatches, sentByAddress } from '../../shared/events/trigger-routes.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import { collectionGroup, tenantCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { eventIdTime } from '../events/event-log.ts';
import { publishToWorkers } from './worker-channel.ts';

interface StoredRoutes {
  job: string;
  /** Worker → the filters of the job's message triggers there, as JSON text. */
  routes_json: string;
}

type Routes = Record<string, MessageFilter[]>;

/**
 * Records, inside the lifecycle's transaction, what the job's message triggers listen for
 * on each worker it is deployed to; a job without message triggers (or deployments) has none.
 */
export function writeTriggerRoutes(
  tx: Transaction,
  db: Firestore,
  tenant: string,
  job: string,
  definition: { input?: unknown } | undefined,
  workers: string[],
): void {
  const ref = tenantCollection(db, tenant, 'message-routes').doc(job);
  const filters = definition ? messageFiltersOf(definition) : [];
  if (!filters.length || !workers.length) {
    tx.delete(ref);
    return;
  }
  const routes: Routes = Object.fromEntries(workers.map((worker) => [worker, filters]));
  tx.set(ref, { job, routes_json: JSON.stringify(routes) } satisfies StoredRoutes);
}

/** The workers each event goes to: those with a route that matches it. */
export async function routeEvents(
  db: Firestore,
  tenant: string,
  events: SluiceEvent[],
): Promise<{ event: SluiceEvent; workers: string[] }[]> {
  const candidates = events.filter((event) => !sentByAddress(event));
  if (!candidates.length) return [];
  const snap = await tenantCollection(db, tenant, 'message-routes').get();
  const byWorker = new Map<string, MessageFilter[]>();
  for (const doc of snap.docs) {
    const routes = JSON.parse((doc.data() as StoredRoutes).routes_json) as Routes;
    for (const [worker, filters] of Object.entries(routes))
      byWorker.set(worker, [...(byWorker.get(worker) ?? []), ...filters]);
  }
  return candidates
    .map((event) => ({
      event,
      workers: [...byWorker].filter(([, filters]) => routeMatches(filters, event)).map(([worker]) => worker),
    }))
    .filter((routed) => routed.workers.length > 0);
}

/** Sends each event to the workers that listen for it; returns how many messages went out. */
export async function relayEvents(deps: AppDeps, tenant: string, events: SluiceEvent[]): Promise<number> {
  const routed = await routeEvents(await deps.clients.firestore(), tenant, events);
  if (!routed.length) return 0;
  const pubsub = await deps.clients.pubsub();
  const sends = routed.flatMap(({ event, workers }) =>
    workers.map((worker) => publishToWorkers(pubsub, { tenant, worker }, event)),
  );
  await Promise.all(sends);
  return sends.length;
}

/** An event as the log stores it, back in the contract's shape. */
export function eventFromStored(data: Record<string, unknown>): SluiceEvent {
  const { expires_at: _, ...event } = data;
  return event as unknown as SluiceEvent;
}

const RELISTEN_AFTER = 2_000;

/**
 * Listens to every tenant's log and relays events recorded from now on (the local stack's
 * stand-in for the Eventarc trigger). Returns a function that stops it.
 */
export function startEventRelay(deps: AppDeps, options: { onError?: (err: Error) => void } = {}): () => void {
  let stopped = false;
  let unsubscribe: (() => void) | undefined;
  let cursor = eventIdTime(new Date());
  let seen = 0;
  const listen = async () => {
    const db = await deps.clients.firestore();
    if (stopped) return;
    seen = 0;
    unsubscribe = collectionGroup(db, 'events')
      .where('id', '>', cursor)
      .orderBy('id')
      .onSnapshot(
        (snap) => {
          const byTenant = new Map<string, SluiceEvent[]>();
          for (const change of snap.docChanges()) {
            if (change.type !== 'added') continue;
            const tenant = change.doc.ref.parent.parent!.id;
            const event = eventFromStored(change.doc.data());
            if (event.id > cursor) cursor = event.id;
            byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), event]);
          }
          for (const [tenant, events] of byTenant)
            relayEvents(deps, tenant, events).catch((err: Error) => options.onError?.(err));
          // A listener keeps every document it matched: listen again from the cursor now and
          // then, so a stack that runs for days does not hold its whole log in memory.
          seen += snap.docChanges().length;
          if (seen > RELISTEN_AFTER && !stopped) {
            unsubscribe?.();
            void listen();
          }
        },
        (err) => {
          // A broken stream (the emulator restarting): listen again from the last event seen.
          options.onError?.(err);
          if (!stopped) setTimeout(() => void listen(), 1_000);
        },
      );
  };
  void listen();
  return () => {
    stopped = true;
    unsubscribe?.();
  };
}
