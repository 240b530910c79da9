/**
 * What the local stack does besides serving HTTP: one-off start-up work and the
 * periodic ticks that stand in for Cloud Scheduler and Pub/Sub push in the cloud.
 * Later features add themselves here.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppDeps } from '../functions/app/deps.ts';
import { drainOutbox } from '../functions/contexts/outbox.ts';
import { bootstrapAdmin } from '../functions/identity/bootstrap.ts';
import { cloudWorkerTick } from '../functions/scheduled/cloud-worker.ts';
import { sweepExpired, withoutFirestoreTtl } from '../functions/scheduled/ttl-sweep.ts';
import { sweepOfflineWorkers } from '../functions/workers/offline-sweep.ts';

export interface StartupTask {
  name: string;
  /** Returns lines to print to the operator (e.g. a generated admin password). */
  run(deps: AppDeps, env: NodeJS.ProcessEnv, dataDir: string): Promise<string[]>;
}

export interface PeriodicTask {
  name: string;
  everyMs: number;
  run(deps: AppDeps): Promise<void>;
}

/** CONTRACT section 8: with no users stored, create the system admin `admin`. */
const bootstrapAdminTask: StartupTask = {
  name: 'bootstrap admin',
  async run(deps, env, dataDir) {
    const result = await bootstrapAdmin(deps, { password: env.SLUICE_ADMIN_PASSWORD });
    if (!result.created) return [];
    if (!result.password)
      return ['created the system admin `admin` with the password in SLUICE_ADMIN_PASSWORD'];
    const file = join(dataDir, 'admin-password');
    await writeFile(file, result.password + '\n', { mode: 0o600 });
    await chmod(file, 0o600);
    return [`created the system admin \`admin\`; password (shown once, also in ${file}): ${result.password}`];
  },
};

export const STARTUP_TASKS: StartupTask[] = [bootstrapAdminTask];

/** Publishes worker messages whose first delivery failed (Cloud Scheduler does this in the cloud). */
const drainOutboxTask: PeriodicTask = {
  name: 'drain outbox',
  everyMs: 5_000,
  run: async (deps) => void (await drainOutbox(deps)),
};

/** The built-in `cloud` worker: runs the jobs deployed to it, within the tick. */
const cloudWorkerTask: PeriodicTask = {
  name: 'cloud worker',
  everyMs: 5_000,
  run: async (deps) => void (await cloudWorkerTick(deps, Date.now() + 4_500)),
};

/** Records `worker-offline` for workers that missed three heartbeats. */
const offlineSweepTask: PeriodicTask = {
  name: 'offline workers',
  everyMs: 10_000,
  run: async (deps) => void (await sweepOfflineWorkers(deps)),
};

/**
 * Deletes expired documents (fingerprints, events, login failures, stream tickets), a
 * bounded batch a tick, where Firestore runs no TTL policy (the emulator). In the cloud the
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
  offlineSweepTask,
  expireDocumentsTask,
];
