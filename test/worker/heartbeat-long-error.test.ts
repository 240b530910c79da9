/**
 * A job's error of any length reaches the control plane. The heartbeat takes a job's error
 * of at most 2,000 characters, and the worker runtime sent the whole error of a failed run:
 * a job whose URL is long failed with an error quoting it, every heartbeat was then refused
 * (400), its reports waited behind them, and the worker went offline while it was running.
 * The runtime now sends the error's first 2,000 characters, cut with a mark.
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runWorker } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { inProcessWorkerApi } from '../helpers/worker-api.ts';
import { deployJob, type Headers, storedDeployments } from '../security/worker-helpers.ts';

let t: TestApp;
let admin: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

/** A loopback port nothing listens on: a request to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

it('reports a failed job whose error is longer than a heartbeat takes', async () => {
  const key = (await json(await t.request('/api/workers', jsonInit('POST', { id: 'long-error' }, admin))))
    .key;
  const token = (await json(await t.request('/api/tokens/create/api', jsonInit('POST', { key }))))
    .token as string;
  const url = `http://127.0.0.1:${await closedPort()}/${'segment/'.repeat(300)}`;
  await deployJob(
    t,
    admin,
    'long-url',
    ['long-error'],
    `name: long-url\ninput:\n  http-poll:\n    url: '${url}'\noutput:\n  print: {}\n`,
  );
  const controller = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const log: string[] = [];
  const done = runWorker({
    api: async () => inProcessWorkerApi(t, bearer(token), inFlight),
    worker: 'long-error',
    output: { write: async () => {}, close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), 'sluice-long-error-'))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 300,
    waitSeconds: 1,
    apiCodeOf: (err) => (err as { code?: string }).code,
  });
  try {
    const deadline = Date.now() + 20_000;
    let deployment = (await storedDeployments(t, 'long-url'))['long-error'];
    while (deployment?.state !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      deployment = (await storedDeployments(t, 'long-url'))['long-error'];
    }
    expect(deployment?.state, log.join('\n')).toBe('failed');
    const error = (deployment as { error?: string }).error ?? '';
    expect(error.length).toBeLessThanOrEqual(2000);
    expect(error).toMatch(/^.*127\.0\.0\.1.*segment\/segment\/.*…$/s);
    expect(log.filter((line) => line.startsWith('heartbeat failed'))).toEqual([]);
  } finally {
    controller.abort();
    await done.catch(() => {});
    await Promise.allSettled([...inFlight]);
  }
}, 60_000);
