/**
 * How `sluice worker run` ends, as an operator meets it (the real process against a served
 * control plane):
 * - Ctrl-C ends it within moments, though its long poll for messages waits 20 s, and its
 *   deployments say `pending` (no longer running there) instead of staying `running`;
 * - deleting the worker (or rotating its key) refuses its credential: it stops its jobs
 *   and exits 3 saying why, instead of retrying as if the control plane were down;
 * - a rotated key does the same for the process still holding the old one;
 * - a second `worker run` of the same worker takes it over: the first stops its jobs and
 *   exits 1 saying why, instead of both running every job (each event printed twice).
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';
import { startWorkerProcess } from '../helpers/worker-process.ts';

let t: TestApp;
let api: { url: string; close(): Promise<void> };
let admin: Record<string, string>;
let upstream: Server;
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  api = await serveTestApp(t);
  upstream = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/status`;
  const yaml = `name: status\ninput:\n  http-poll:\n    url: '${url}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`;
  const saved = await t.request('/api/jobs/status', {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: yaml,
  });
  expect(saved.status).toBe(201);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  upstream.close();
  await api.close();
  await t.close();
});

/** A worker created and deployed the job, its `worker run` process printing the job's events. */
async function runningWorker(id: string) {
  const created = await json(await t.request('/api/workers', jsonInit('POST', { id }, admin)));
  const deployed = await t.request('/api/jobs/status/deploy', jsonInit('POST', { workers: [id] }, admin));
  expect(deployed.status).toBe(200);
  return { key: created.key as string, ...(await workerRun(id, created.key)) };
}

/** `sluice worker run` with `key`, once it prints the job's events. */
async function workerRun(id: string, key: string) {
  const worker = startWorkerProcess(api.url, key, id);
  children.push(worker.child);
  const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
  /** The job's events printed so far (its logs never hold this text). */
  const printed = () => worker.output().split('"ok":true').length - 1;
  await until(() => printed() > 0, 20_000, `worker ${id} printing its job`);
  return { child: worker.child, exited, printed, stderr: worker.stderr };
}

it('ends within moments of Ctrl-C, though its long poll waits 20 s', async () => {
  const worker = await runningWorker('edge-stop');
  // Its long poll for messages is open by now (it polls while the job runs).
  const stoppedAt = Date.now();
  worker.child.kill('SIGINT');
  expect(await worker.exited).toBe(0);
  expect(Date.now() - stoppedAt, worker.stderr()).toBeLessThan(5_000);
  // It said its job no longer runs there, rather than leave it `running`.
  const job = await json(await t.request('/api/jobs/status', { headers: admin }));
  expect(
    job.deployments.find((d: { worker: string }) => d.worker === 'edge-stop'),
    worker.stderr(),
  ).toMatchObject({
    state: 'pending',
  });
}, 60_000);

it('stops its jobs and exits 3 when the worker is deleted, saying why', async () => {
  const worker = await runningWorker('edge-deleted');
  const removed = await t.request('/api/workers/edge-deleted', { method: 'DELETE', headers: admin });
  expect(removed.status).toBe(204);
  expect(await worker.exited).toBe(3);
  expect(worker.stderr()).toContain('worker edge-deleted: the control plane refused its key');
  expect(worker.stderr()).toContain('deleted or its key was rotated');
  expect(worker.stderr()).toContain('sluice worker rotate-key');
}, 60_000);

it('stops the process holding the old key when the key is rotated', async () => {
  const worker = await runningWorker('edge-rotated');
  const rotated = await t.request('/api/workers/edge-rotated/rotate-key', { method: 'POST', headers: admin });
  expect(rotated.status).toBe(201);
  expect(await worker.exited).toBe(3);
  expect(worker.stderr()).toContain('worker edge-rotated: the control plane refused its key');
}, 60_000);

it('lets a second worker run of the same worker take it over: the first stops its jobs and exits 1', async () => {
  const first = await runningWorker('edge-twice');
  const second = await workerRun('edge-twice', first.key);
  expect(await first.exited).toBe(1);
  expect(first.stderr()).toContain('worker edge-twice: another `sluice worker run` took this worker over');
  // The one started last runs the job, and the deployment's state is its own.
  const printed = second.printed();
  await until(() => second.printed() > printed, 20_000, 'the second runtime printing on');
  const job = await json(await t.request('/api/jobs/status', { headers: admin }));
  expect(job.deployments.find((d: { worker: string }) => d.worker === 'edge-twice')).toMatchObject({
    state: 'running',
  });
  second.child.kill('SIGINT');
  expect(await second.exited).toBe(0);
}, 60_000);
