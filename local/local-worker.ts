/**
 * The local stack's built-in worker `local`: a `sluice worker run` process started by
 * `npm start` and stopped with it. Its key is kept in `.sluice/local-worker-key` (0600);
 * when the key or the worker is missing, the worker is created or given a new key.
 * Its job output appears in the `npm start` terminal, prefixed with `[local]`.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppDeps } from '../functions/app/deps.ts';
import { authServices } from '../functions/auth/services.ts';
import { ensureWorkerSubscription } from '../functions/messaging/worker-channel.ts';
import { createWorker } from '../functions/workers/registry.ts';
import { type GuardedProcess, spawnGuarded } from './processes.ts';

export const LOCAL_WORKER = 'local';
const TENANT = 'default';

export async function startLocalWorker(
  deps: AppDeps,
  options: { url: string; certPath?: string; dataDir: string },
): Promise<GuardedProcess> {
  const key = await localWorkerKey(deps, options.dataDir);
  const args = [
    'bin/sluice.js',
    'worker',
    'run',
    '--server',
    options.url,
    '--state-dir',
    join(options.dataDir, 'local-worker-state'),
    // `file` outputs of jobs deployed to `local` write here (paths relative to it).
    '--data-dir',
    process.env.SLUICE_DATA_DIR ?? join(options.dataDir, 'local-worker-data'),
  ];
  if (options.certPath) args.push('--ca-file', options.certPath);
  return await spawnGuarded('local worker', process.execPath, args, /connected to/, {
    // Jobs on the local worker may call the local stack itself, so they trust its certificate.
    env: { SLUICE_WORKER_KEY: key, ...(options.certPath ? { NODE_EXTRA_CA_CERTS: options.certPath } : {}) },
    onOutput: (chunk, stream) => {
      const text = chunk.toString().replace(/^(?=.)/gm, '[local] ');
      (stream === 'stdout' ? process.stdout : process.stderr).write(text);
    },
  });
}

async function localWorkerKey(deps: AppDeps, dataDir: string): Promise<string> {
  const file = join(dataDir, 'local-worker-key');
  const store = await authServices(deps).store();
  const exists = (await store.worker(TENANT, LOCAL_WORKER).get()).exists;
  if (exists && existsSync(file)) return (await readFile(file, 'utf8')).trim();
  if (exists) {
    // The key was lost with .sluice/; the worker gets a new one.
    const batch = store.db.batch();
    const record = (await store.worker(TENANT, LOCAL_WORKER).get()).data()!;
    batch.delete(store.keyIndex(record.key_hash as string));
    batch.delete(store.worker(TENANT, LOCAL_WORKER));
    await batch.commit();
  }
  const key = await createWorker(store, TENANT, LOCAL_WORKER, { builtin: 'local' });
  await ensureWorkerSubscription(await deps.clients.pubsub(), TENANT, LOCAL_WORKER);
  await writeFile(file, key + '\n', { mode: 0o600 });
  return key;
}
