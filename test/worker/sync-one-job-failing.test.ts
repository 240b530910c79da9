// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${dyn|..} is literal job text here
/**
 * One job whose run-time values the control plane cannot give (its variables request fails,
 * every time) held up the whole worker: the runtime retried reading its jobs with back-off
 * and never went back to waiting for messages, so a message-triggered job on the same worker
 * never saw its messages, and other deploys waited for the next retry (up to 30 s). Now the
 * failing job is retried on its own schedule while the worker keeps receiving messages.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkerApi } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { jsonInit } from '../helpers/http.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';
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

/** The control plane failing one job's variables request, every time (as a 500 does). */
const failingVariablesOf =
  (job: string) =>
  (api: WorkerApi): WorkerApi => ({
    get: (path, options) =>
      path === '/api/worker/variables' && options?.query?.job === job
        ? Promise.reject(Object.assign(new Error('500 internal error'), { code: 'internal' }))
        : api.get(path, options),
    post: (path, options) => api.post(path, options),
  });

it('keeps receiving messages while one job’s values cannot be fetched', async () => {
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
  const worker = await startInProcessWorker(t, admin, 'one-job-failing', {
    wrap: failingVariablesOf('stuck'),
  });
  try {
    await deployJob(
      t,
      admin,
      'on-message',
      ['one-job-failing'],
      `name: on-message\ninput:\n  http-poll:\n    url: '${url}'\n    json: true\n    trigger:\n      message:\n        filter-tag: go\noutput:\n  print: {}\n`,
    );
    await worker.until(
      () => worker.log.includes('on-message: starting version 1'),
      15_000,
      'on-message started',
    );
    await deployJob(
      t,
      admin,
      'stuck',
      ['one-job-failing'],
      `name: stuck\ninput:\n  http-poll:\n    url: '${url}?v=\${dyn|v||x}'\n    json: true\noutput:\n  print: {}\n`,
    );
    await worker.until(
      () => worker.log.some((line) => line.startsWith('stuck:') && line.includes('500 internal error')),
      15_000,
      'the failing job noticed',
    );
    expect(
      (await t.request('/api/messages', jsonInit('POST', { tags: ['go'], payload: {} }, admin))).status,
    ).toBe(201);
    await worker.until(
      async () => (await events(t, admin, 'job=on-message&type=job-run-ended')).length > 0,
      10_000,
      'on-message ran on its message',
    );
    await worker.until(
      () => worker.log.some((line) => line.startsWith('stuck:') && line.includes('trying again in 2 s')),
      10_000,
      'the failing job tried again',
    );
  } finally {
    await worker.stop();
  }
}, 60_000);
