/**
 * A report the control plane refuses as malformed (400) is dropped, not retried: the worker
 * runtime sent the same refused batch with every heartbeat, for ever, and every report after
 * it waited behind it (and, past 5,000, was lost). A newer worker meeting an older control
 * plane is how this happens: one that does not know a report's kind or shape.
 * The runtime now narrows a refused batch down to the reports refused, logs them by kind
 * and job, and sends the rest.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkerApi } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
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

const pollJob = (name: string, url: string) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: '${url}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`;

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
  const worker = await startInProcessWorker(t, admin, 'refused-telemetry', { wrap: withUnknownRunStarted });
  try {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
    await deployJob(t, admin, 'polls', ['refused-telemetry'], pollJob('polls', url));
    const ended = async () => (await events(t, admin, 'job=polls&type=job-run-ended')).length;
    await worker.until(async () => (await ended()) >= 2, 20_000, 'two job-run-ended events');
    expect(await events(t, admin, 'job=polls&type=job-run-started')).toEqual([]);
    expect(
      worker.log.some((line) =>
        /^polls: the control plane refused its job-run-started report, which is dropped: 400/.test(line),
      ),
      worker.log.join('\n'),
    ).toBe(true);
  } finally {
    await worker.stop();
  }
}, 60_000);

it('tells the event log how many reports it could not keep while the control plane was away', async () => {
  let away = true;
  const whileAway = (api: WorkerApi): WorkerApi => ({
    get: (path, options) => api.get(path, options),
    post: (path, options) =>
      away && path === '/api/worker/events'
        ? Promise.reject(new Error('fetch failed (connect ECONNREFUSED)'))
        : api.post(path, options),
  });
  const worker = await startInProcessWorker(t, admin, 'queue-full', { wrap: whileAway, maxQueuedReports: 4 });
  try {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
    await deployJob(t, admin, 'polls-often', ['queue-full'], pollJob('polls-often', url));
    const runsLogged = () =>
      worker.log.filter((line) => line.startsWith('polls-often: job-run-ended')).length;
    // Three reports a run (started, ended, metrics): by the fourth end, eleven, of which four are kept.
    await worker.until(() => runsLogged() >= 4, 20_000, 'four runs');
    away = false;
    const dropped = async () =>
      (await events(t, admin, 'job=polls-often&type=job-errors')).filter(
        (e) => e.payload.reason === 'reports-dropped',
      );
    await worker.until(async () => (await dropped()).length > 0, 20_000, 'a reports-dropped event');
    const [notice] = await dropped();
    expect(notice!.payload.dropped).toBeGreaterThanOrEqual(7);
    expect(notice!.payload.message).toMatch(
      /^\d+ run reports were not kept while the control plane could not take them/,
    );
  } finally {
    await worker.stop();
  }
}, 60_000);
