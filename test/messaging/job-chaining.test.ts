/**
 * Issue 17, behaviour 3: every event the platform records reaches the `message` triggers
 * that can match it, with its true source. The use case: job B
 * (`filter-type: [job-run-ended], filter-job: A`) runs each time job A ends, on another
 * worker, within 2 s, and its `limit` counts. Real worker processes, the real API over
 * HTTP, the Firestore and Pub/Sub emulators, and the relay as the local stack runs it.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeEvents, startEventRelay } from '../../functions/messaging/event-relay.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { startWorkerProcess } from '../helpers/worker-process.ts';
import { deployJob } from '../security/worker-helpers.ts';

let t: TestApp;
let api: { url: string; close(): Promise<void> };
let admin: Record<string, string>;
let upstream: Server;
let stopRelay: () => void;
/** When the upstream saw each request, by path. */
const hits = new Map<string, number[]>();
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  api = await serveTestApp(t);
  stopRelay = startEventRelay(t.deps);
  upstream = createServer((req, res) => {
    hits.set(req.url!, [...(hits.get(req.url!) ?? []), Date.now()]);
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  stopRelay();
  upstream.close();
  await api.close();
  await t.close();
});

const count = (path: string) => hits.get(path)?.length ?? 0;

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return await check();
}

async function worker(id: string) {
  const key = (await json(await t.request('/api/workers', jsonInit('POST', { id }, admin)))).key as string;
  const started = startWorkerProcess(api.url, key, id);
  children.push(started.child);
  return started;
}

const url = (path: string) => `http://127.0.0.1:${(upstream.address() as AddressInfo).port}${path}`;

const onEnd = (name: string, path: string, limit?: number) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: ${url(path)}\n    json: true\n    trigger:\n      message:\n        filter-type: [job-run-ended]\n        filter-job: chain-a\n${limit ? `        limit: ${limit}\n` : ''}output:\n  discard: {}\n`;

describe('job chaining through message triggers', () => {
  it('runs job B on another worker within 2 s of each end of job A, up to its limit', async () => {
    const b = await worker('chain-w-b');
    await worker('chain-w-a');
    await worker('chain-w-c');
    // B (limit 3) and C (no limit) listen for A's ends on w-b; C shows the messages kept coming.
    await deployJob(t, admin, 'chain-b', ['chain-w-b'], onEnd('chain-b', '/b', 3));
    await deployJob(t, admin, 'chain-c', ['chain-w-b'], onEnd('chain-c', '/c'));
    expect(await until(() => b.stderr().includes('chain-c: starting'), 20_000), b.stderr()).toBe(true);
    expect(await until(() => b.stderr().includes('chain-b: starting'), 20_000), b.stderr()).toBe(true);

    await deployJob(
      t,
      admin,
      'chain-a',
      ['chain-w-a'],
      `name: chain-a\ninput:\n  http-poll:\n    url: ${url('/a')}\n    json: true\n    trigger:\n      interval:\n        duration: 700ms\noutput:\n  discard: {}\n`,
    );
    expect(await until(() => count('/b') >= 3, 20_000)).toBe(true);
    // Each of B's runs follows one of A's within 2 s (A's run ends right after its request).
    const aTimes = hits.get('/a')!;
    for (const at of hits.get('/b')!.slice(0, 3)) {
      const before = aTimes.filter((a) => a <= at).at(-1)!;
      expect(at - before).toBeLessThan(2_000);
    }
    // C keeps running on A's ends; once it has run three more times, B had those messages too.
    const cAfter = count('/c') + 3;
    expect(await until(() => count('/c') >= cAfter, 20_000)).toBe(true);
    expect(count('/b')).toBe(3);

    // A's ends are recorded as the job's own events, and routed to w-b alone: w-a and w-c
    // deploy nothing that listens for them.
    const ended = await json(
      await t.request('/api/events?type=job-run-ended&job=chain-a&limit=1', { headers: admin }),
    );
    const event = ended.events[0] as SluiceEvent;
    expect(event).toMatchObject({ source: 'job', kind: 'system', worker: 'chain-w-a' });
    const db = await t.deps.clients.firestore();
    expect(await routeEvents(db, 'default', [event])).toEqual([{ event, workers: ['chain-w-b'] }]);
  }, 90_000);

  it('routes each kind of event by type, source, job, worker and kind, and nothing a trigger cannot match', async () => {
    const db = await t.deps.clients.firestore();
    await deployJob(
      t,
      admin,
      'on-worker-events',
      ['chain-w-c'],
      `name: on-worker-events\ninput:\n  http-poll:\n    url: ${url('/w')}\n    json: true\n    trigger:\n      message:\n        filter-source: [worker]\n        filter-worker: chain-w-a\noutput:\n  discard: {}\n`,
    );
    const base = { id: 'x', time: new Date().toISOString(), payload: {} };
    const workerEvent = {
      ...base,
      type: 'worker-offline',
      kind: 'system',
      source: 'worker',
      worker: 'chain-w-a',
    } as SluiceEvent;
    const otherWorker = { ...workerEvent, worker: 'chain-w-b' } as SluiceEvent;
    const serverEvent = {
      ...base,
      type: 'job-updated',
      kind: 'system',
      source: 'server',
      job: 'chain-a',
    } as SluiceEvent;
    expect(await routeEvents(db, 'default', [workerEvent, otherWorker, serverEvent])).toEqual([
      { event: workerEvent, workers: ['chain-w-c'] },
    ]);
  });
});
