/**
 * A worker runtime newer than its control plane: a control plane that predates heartbeat
 * sessions refuses the unknown field (400). The runtime then heartbeats as the contract
 * says, without it, and says once that two runtimes of this worker would both run; its
 * jobs' states still reach the control plane.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runWorker, type WorkerApi } from '../../functions/runner/worker-runtime.ts';
import { until } from '../helpers/until.ts';

/** The error our API client throws for a 400, with its API code. */
const refusal = (message: string) => Object.assign(new Error(message), { apiCode: 'invalid_request' });

it('heartbeats without a session when the control plane refuses the field', async () => {
  const heartbeats: unknown[] = [];
  const api: WorkerApi = {
    async get<T>(path: string, options?: { signal?: AbortSignal }): Promise<T> {
      if (path === '/api/worker/jobs') return [] as T;
      await new Promise((r) => setTimeout(r, 50));
      options?.signal?.throwIfAborted();
      return { messages: [] } as T;
    },
    async post<T>(path: string, options?: { body?: unknown }): Promise<T> {
      const body = options?.body as { session?: unknown };
      if (path === '/api/worker/heartbeat') {
        if (body.session) throw refusal('invalid request body: Unrecognized key: "session"');
        heartbeats.push(body);
      }
      return undefined as T;
    },
  };
  const controller = new AbortController();
  const log: string[] = [];
  const done = runWorker({
    api: async () => api,
    worker: 'w',
    output: { write: async () => {}, close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), 'sluice-fallback-'))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 50,
    waitSeconds: 1,
    apiCodeOf: (err) => (err as { apiCode?: string }).apiCode,
  });
  await until(() => heartbeats.length >= 3, 10_000, 'three heartbeats');
  controller.abort();
  await done;
  expect(heartbeats[0]).toEqual({ jobs: [] });
  expect(log.filter((l) => l.includes('takes no heartbeat sessions'))).toHaveLength(1);
  expect(log.filter((l) => l.includes('heartbeat failed'))).toEqual([]);
});
