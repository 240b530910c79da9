/**
 * Sluice's Cloud Storage emulator: the subset of the GCS JSON API that
 * `@google-cloud/storage` uses, in memory or backed by a folder (each subfolder a
 * bucket). Google's own emulator cannot run offline, so tests and the local stack use this.
 *
 * @example
 *   const gcs = await startStorageEmulator({ port: 0 });
 *   process.env.STORAGE_EMULATOR_HOST = gcs.url;
 *   const storage = new Storage({ projectId: 'demo' });
 *   await gcs.stop();
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FaultConfig, FaultInjector, type RequestStats } from './faults.ts';
import { createHandler } from './server.ts';
import { ObjectStore } from './store.ts';
import { DEFAULT_UPLOAD_LIMITS } from './uploads.ts';

export type { FaultConfig, RequestStats };

export interface StorageEmulatorOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Serve each subfolder of this directory as a bucket; in memory when absent. */
  dir?: string;
  /** The largest object an upload may make (uploads are held in memory); 2 GiB when absent. */
  maxObjectBytes?: number;
}

export interface StorageEmulator {
  /** Base URL, e.g. `http://127.0.0.1:9023`: the value for `STORAGE_EMULATOR_HOST` or `apiEndpoint`. */
  url: string;
  host: string;
  port: number;
  setFaults(config: FaultConfig): void;
  stats(): RequestStats;
  resetStats(): void;
  stop(): Promise<void>;
}

export async function startStorageEmulator(options: StorageEmulatorOptions = {}): Promise<StorageEmulator> {
  const host = options.host ?? '127.0.0.1';
  const store = new ObjectStore(options.dir);
  await store.load();
  const faults = new FaultInjector();
  let url = '';
  const server = createServer(
    { keepAliveTimeout: 30_000 },
    createHandler(store, faults, () => url, undefined, {
      ...DEFAULT_UPLOAD_LIMITS,
      ...(options.maxObjectBytes ? { maxObjectBytes: options.maxObjectBytes } : {}),
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  url = `http://${host}:${port}`;
  return {
    url,
    host: `${host}:${port}`,
    port,
    setFaults: (config) => faults.configure(config),
    stats: () => ({ ...faults.stats }),
    resetStats: () => faults.resetStats(),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.flush();
    },
  };
}
