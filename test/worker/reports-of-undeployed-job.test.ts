/**
 * A job undeployed while its worker missed the message (the worker was away past the
 * subscription's retention, or the message was lost): the control plane refuses (403) any
 * report batch naming that job, whole. The runtime kept the job running and sent the same
 * refused batch with every heartbeat, so no report of any other job reached the event log
 * again until something else made it re-read its jobs. Now a refused batch makes it re-read
 * them at once: the undeployed job stops and its reports go, the others' are delivered.
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

const pollJob = (name: string, url: string) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: '${url}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`;

it('stops a job undeployed behind its back and keeps delivering the other jobs’ reports', async () => {
  let deaf = false;
  /** Once deaf, the worker's messages never reach it (taken and dropped, as if lost). */
  const missesMessages = (api: WorkerApi): WorkerApi => ({
    get: async <T>(path: string, options?: Parameters<WorkerApi['get']>[1]) => {
      const answer = await api.get<T>(path, options);
      return deaf && path === '/api/worker/messages' ? ({ messages: [] } as T) : answer;
    },
    post: (path, options) => api.post(path, options),
  });
  const worker = await startInProcessWorker(t, admin, 'misses-undeploy', { wrap: missesMessages });
  try {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
    await deployJob(t, admin, 'kept', ['misses-undeploy'], pollJob('kept', url));
    await deployJob(t, admin, 'gone', ['misses-undeploy'], pollJob('gone', url));
    const ended = async (job: string) => (await events(t, admin, `job=${job}&type=job-run-ended`)).length;
    await worker.until(
      async () => (await ended('kept')) > 0 && (await ended('gone')) > 0,
      20_000,
      'both jobs reporting',
    );
    deaf = true;
    const undeploy = await t.request(
      '/api/jobs/gone/undeploy',
      jsonInit('POST', { workers: ['misses-undeploy'] }, admin),
    );
    expect(undeploy.status).toBe(200);
    const keptBefore = await ended('kept');
    await worker.until(
      async () => (await ended('kept')) >= keptBefore + 5,
      20_000,
      'five more runs of the job still deployed in the event log',
    );
    await worker.until(
      () => worker.log.includes('gone: removed from this worker'),
      10_000,
      'the undeployed job stopped',
    );
  } finally {
    await worker.stop();
  }
}, 60_000);
