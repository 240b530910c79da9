/**
 * A worker runtime (`runWorker`) run in the test's process against a test app, as
 * `sluice worker run` runs against a control plane: a worker created through the API, its
 * key exchanged for a token, requests through `inProcessWorkerApi`. `stop()` stops the
 * runtime and waits for its requests, so the app can be closed after it.
 *
 * @example
 *   const worker = await startInProcessWorker(t, admin, 'edge-1');
 *   try { await worker.until(() => hits.length > 0, 20_000, 'a request'); } finally { await worker.stop(); }
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runWorker, type WorkerApi } from '../../functions/runner/worker-runtime.ts';
import type { TestApp } from './app.ts';
import { bearer } from './auth.ts';
import { json, jsonInit } from './http.ts';
import { until } from './until.ts';
import { inProcessWorkerApi } from './worker-api.ts';

export interface InProcessWorker {
  /** What the runtime logged, in order. */
  log: string[];
  /** `until` (helpers/until.ts), failing with the runtime's log. */
  until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startInProcessWorker(
  t: TestApp,
  admin: Record<string, string>,
  id: string,
  options: {
    /** Stands between the runtime and the API (a control plane that answers otherwise). */
    wrap?: (api: WorkerApi) => WorkerApi;
    maxQueuedReports?: number;
  } = {},
): Promise<InProcessWorker> {
  const { wrap = (api) => api, maxQueuedReports } = options;
  const created = await t.request('/api/workers', jsonInit('POST', { id }, admin));
  if (created.status !== 201) throw new Error(`worker ${id}: ${created.status} ${await created.text()}`);
  const { key } = await json(created);
  const token = (await json(await t.request('/api/tokens/create/api', jsonInit('POST', { key })))).token;
  const controller = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const log: string[] = [];
  const done = runWorker({
    api: async () => wrap(inProcessWorkerApi(t, bearer(token as string), inFlight)),
    worker: id,
    output: { write: async () => {}, close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), `sluice-${id}-`))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 300,
    waitSeconds: 1,
    apiCodeOf: (err) => (err as { code?: string }).code,
    ...(maxQueuedReports === undefined ? {} : { maxQueuedReports }),
  });
  return {
    log,
    async until(check, ms, what) {
      await until(check, ms, what).catch((err: Error) => {
        throw new Error(`${err.message}; the runtime logged:\n${log.join('\n')}`);
      });
    },
    async stop() {
      controller.abort();
      await done.catch(() => {});
      await Promise.allSettled([...inFlight]);
    },
  };
}
