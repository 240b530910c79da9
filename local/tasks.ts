/**
 * What the local stack does besides serving HTTP: one-off start-up work, and the
 * periodic tasks of functions/scheduled/tasks.ts (which Cloud Scheduler runs in the
 * cloud), here on timers.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { collectionGroup } from '../functions/adapters/firestore-paths.ts';
import type { AppDeps } from '../functions/app/deps.ts';
import { bootstrapAdmin } from '../functions/identity/bootstrap.ts';
import { ensureWorkerSubscription } from '../functions/messaging/worker-channel.ts';

export { PERIODIC_TASKS, type PeriodicTask } from '../functions/scheduled/tasks.ts';

export interface StartupTask {
  name: string;
  /** Returns lines to print to the operator (e.g. a generated admin password). */
  run(deps: AppDeps, env: NodeJS.ProcessEnv, dataDir: string): Promise<string[]>;
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

/**
 * The Pub/Sub emulator keeps nothing across a restart, while the workers are kept in
 * Firestore: each worker's message subscription is made again, or the local worker and
 * every registered one would get no messages after `npm start` ran a second time.
 */
const workerSubscriptionsTask: StartupTask = {
  name: 'worker subscriptions',
  async run(deps) {
    const workers = await collectionGroup(await deps.clients.firestore(), 'workers')
      .select()
      .get();
    const pubsub = await deps.clients.pubsub();
    for (let i = 0; i < workers.docs.length; i += 20)
      await Promise.all(
        workers.docs
          .slice(i, i + 20)
          .map((doc) => ensureWorkerSubscription(pubsub, doc.ref.parent.parent!.id, doc.id)),
      );
    return [];
  },
};

export const STARTUP_TASKS: StartupTask[] = [bootstrapAdminTask, workerSubscriptionsTask];
