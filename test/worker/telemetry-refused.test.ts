/**
 * A report the control plane refuses as malformed (400) is dropped, not retried: the worker
 * runtime sent the same refused batch with every heartbeat, for ever, and every report after
 * it waited behind it (and, past 5,000, was lost). A newer worker meeting an older control
 * plane is how this happens: one that does not know a report's kind or shape.
 * The runtime now narrows a refused batch down to the reports refused, logs them by kind
 * and job, and sends the rest.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runWorker, type WorkerApi } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { inProcessWorkerApi } from '../helpers/worker-api.ts';
import { deployJob, events, type Headers } from '../security/worker-helpers.ts';

let t: TestApp;
let admin: Headers;
let upstream: Server;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  upstream = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

/**
 * The control plane as an older version would answer: every `job-run-started` report gets a
 * field the API does not know, so a batch holding one is refused (400) whole, by the real route.
 */
function withUnknownRunStarted(api: WorkerApi): WorkerApi {
  return {
    get: (path, options) => api.get(path, options),
    post: (path, options) => {
      if (path !== '/api/worker/events') return api.post(path, options);
      const body = options?.body as { events: { type: string }[] };
      const events = body.events.map((e) =>
        e.type === 'job-run-started' ? { ...e, from_the_future: 1 } : e,
      );
      return api.post(path, { ...options, body: { events } });
    },
  };
}

it('drops the reports the control plane refuses and delivers the rest', async () => {
  const key = (
    await json(await t.request('/api/workers', jsonInit('POST', { id: 'refused-telemetry' }, admin)))
  ).key;
  const token = (await json(await t.request('/api/tokens/create/api', jsonInit('POST', { key }))))
    .token as string;
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
  await deployJob(
    t,
    admin,
    'polls',
    ['refused-telemetry'],
    `name: polls\ninput:\n  http-poll:\n    url: '${url}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`,
  );
  const controller = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const log: string[] = [];
  const done = runWorker({
    api: async () => withUnknownRunStarted(inProcessWorkerApi(t, bearer(token), inFlight)),
    worker: 'refused-telemetry',
    output: { write: async () => {}, close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), 'sluice-telemetry-'))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 300,
    waitSeconds: 1,
    apiCodeOf: (err) => (err as { code?: string }).code,
  });
  try {
    const ended = async () => (await events(t, admin, 'job=polls&type=job-run-ended')).length;
    const deadline = Date.now() + 20_000;
    while ((await ended()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await ended(), log.join('\n')).toBeGreaterThanOrEqual(2);
    expect(await events(t, admin, 'job=polls&type=job-run-started')).toEqual([]);
    expect(
      log.some((line) =>
        /^polls: the control plane refused its job-run-started report, which is dropped: 400/.test(line),
      ),
      log.join('\n'),
    ).toBe(true);
  } finally {
    controller.abort();
    await done.catch(() => {});
    await Promise.allSettled([...inFlight]);
  }
}, 60_000);
