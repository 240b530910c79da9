/**
 * The periodic tasks: the one list of work that runs on a clock. In the cloud, Cloud
 * Scheduler calls the `scheduled` function (functions/entry/scheduled.ts) every tick and
 * it runs the tasks due on that tick; the local stack (local/tasks.ts) runs the same list
 * on timers. Later features add themselves here, never in local/.
 */
import type { AppDeps } from '../app/deps.ts';
import { drainOutbox } from '../messaging/outbox.ts';
import { dispatchDueRuns } from '../runs/dispatch.ts';
import { releaseParkedRuns } from '../runs/parked-runs.ts';
import { sweepOfflineWorkers } from '../workers/offline-sweep.ts';
import { sweepExpired, withoutFirestoreTtl } from './ttl-sweep.ts';

export interface PeriodicTask {
  name: string;
  /** How often it runs; on a longer tick it runs on the ticks that cross a multiple of this. */
  everyMs: number;
  run(deps: AppDeps): Promise<void>;
}

/** Publishes worker messages whose first delivery failed. */
const drainOutboxTask: PeriodicTask = {
  name: 'drain outbox',
  everyMs: 5_000,
  run: async (deps) => void (await drainOutbox(deps)),
};

/** The built-in `cloud` worker: requests a run of each job deployed to it that is due (runs/dispatch.ts). */
const cloudWorkerTask: PeriodicTask = {
  name: 'cloud worker',
  everyMs: 5_000,
  run: async (deps) => void (await dispatchDueRuns(deps)),
};

/**
 * Sends parked run requests (parts, runs notifications woke) back to the queue for their
 * tenants' free slots, and renews parked parts' hold on their jobs (runs/parked-runs.ts).
 */
const parkedRunsTask: PeriodicTask = {
  name: 'parked runs',
  everyMs: 5_000,
  run: async (deps) => void (await releaseParkedRuns(deps)),
};

/** Records `worker-offline` for workers that missed three heartbeats. */
const offlineSweepTask: PeriodicTask = {
  name: 'offline workers',
  everyMs: 10_000,
  run: async (deps) => void (await sweepOfflineWorkers(deps)),
};

/**
 * Deletes expired documents (fingerprints, events, login failures, stream tickets, run
 * counters, parked run requests), a bounded batch a tick, where Firestore runs no TTL policy (the emulator). In the cloud the
 * TTL policies do it and this does nothing.
 */
const expireDocumentsTask: PeriodicTask = {
  name: 'expire documents',
  everyMs: 60_000,
  run: async (deps) => {
    if (withoutFirestoreTtl()) await sweepExpired(await deps.clients.firestore());
  },
};

export const PERIODIC_TASKS: PeriodicTask[] = [
  drainOutboxTask,
  cloudWorkerTask,
  parkedRunsTask,
  offlineSweepTask,
  expireDocumentsTask,
];
