// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import { runWorker, type WorkerApi } from '../../functions/runner/worker-runtime.ts';

let upstream: Server;
let base: string;

beforeAll(async () => {
  upstream = createServer((req, res) => res.end(JSON.stringify({ path: req.url })));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => upstream.close());

const job = (name: string, path: string, version = 1) => ({
  name,
  version,
  definition: {
    name,
    input: {
      'http-poll': {
        url: `${base}${path}`,
        method: 'GET',
        headers: {},
        json: true,
        timeout: '5s',
        trigger: { interval: { duration: '50ms', 'random-offset': '0s' } },
      },
    },
    output: { print: {} },
  },
});

/** A control plane in memory: what is deployed, a message queue, and what the worker sent. */
function fakeControlPlane() {
  const state = {
    deployed: [] as unknown[],
    queue: [] as { type: string; ack_id: string }[],
    down: false,
    heartbeats: [] as { jobs: { name: string; state: string; error?: string }[] }[],
  };
  const api: WorkerApi = {
    async get<T>(path: string): Promise<T> {
      if (state.down) throw new Error('connect ECONNREFUSED');
      if (path === '/api/worker/jobs') return structuredClone(state.deployed) as T;
      if (path === '/api/worker/messages') {
        for (let i = 0; i < 10 && !state.queue.length; i++) await new Promise((r) => setTimeout(r, 20));
        return { messages: state.queue.splice(0) } as T;
      }
      throw new Error(`unexpected GET ${path}`);
    },
    async post<T>(path: string, options?: { body?: unknown }): Promise<T> {
      if (state.down) throw new Error('connect ECONNREFUSED');
      if (path === '/api/worker/heartbeat') state.heartbeats.push(options!.body as never);
      // A secret deleted after the deploy: the control plane has no value to give.
      if (path === '/api/worker/secrets/resolve') return { values: {} } as T;
      return {} as T;
    },
  };
  return { state, api: async () => api };
}

function startWorker(plane: ReturnType<typeof fakeControlPlane>) {
  const controller = new AbortController();
  const events: RunEvent[] = [];
  const log: string[] = [];
  const done = runWorker({
    api: plane.api,
    worker: 'w',
    output: { write: async (batch) => void events.push(...batch), close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), 'sluice-restarts-'))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 100,
    waitSeconds: 1,
  });
  return { events, log, stop: () => controller.abort(), done };
}

async function until(check: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return check();
}

const starts = (log: string[], name: string) => log.filter((l) => l.startsWith(`${name}: starting`)).length;

describe('the worker runtime keeps jobs current', () => {
  it('restarts only the job whose definition changed, and stops a removed one', async () => {
    const plane = fakeControlPlane();
    plane.state.deployed = [job('a', '/a1'), job('b', '/b')];
    const w = startWorker(plane);
    expect(
      await until(() => w.events.some((e) => e.path === '/a1') && w.events.some((e) => e.path === '/b')),
    );

    plane.state.deployed = [job('a', '/a2', 2), job('b', '/b')];
    plane.state.queue.push({ type: 'context-changed', ack_id: '1' });
    expect(await until(() => w.events.some((e) => e.path === '/a2'))).toBe(true);
    expect(starts(w.log, 'a')).toBe(2);
    expect(starts(w.log, 'b')).toBe(1);

    // A message that changes nothing restarts nothing.
    plane.state.queue.push({ type: 'update-variable', ack_id: '2' });
    await new Promise((r) => setTimeout(r, 300));
    expect(starts(w.log, 'a') + starts(w.log, 'b')).toBe(3);

    plane.state.deployed = [job('b', '/b')];
    plane.state.queue.push({ type: 'deployed-job-removed', ack_id: '3' });
    expect(await until(() => w.log.includes('a: removed from this worker'))).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    const seen = w.events.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(w.events.slice(seen).every((e) => e.path === '/b')).toBe(true);
    w.stop();
    await w.done;
  });

  it('reports a job it cannot run as failed, with the reason, and keeps the others running', async () => {
    const plane = fakeControlPlane();
    const withSecret = job('needs-secret', '/s');
    (withSecret.definition.input['http-poll'].headers as Record<string, string>).authorization =
      '${secret|api/token}';
    plane.state.deployed = [withSecret, job('b', '/b')];
    const w = startWorker(plane);
    expect(await until(() => w.events.some((e) => e.path === '/b'))).toBe(true);
    expect(
      await until(() =>
        plane.state.heartbeats.some((h) =>
          h.jobs.some(
            (j) =>
              j.name === 'needs-secret' && j.state === 'failed' && j.error === 'missing secret api/token',
          ),
        ),
      ),
    ).toBe(true);
    expect(w.events.every((e) => e.path === '/b')).toBe(true);
    w.stop();
    await w.done;
  });

  it("runs the other jobs while one job's secrets cannot be fetched, and retries that one", async () => {
    const plane = fakeControlPlane();
    const withSecret = job('flaky', '/flaky');
    (withSecret.definition.input['http-poll'].headers as Record<string, string>).authorization =
      '${secret|api/token}';
    plane.state.deployed = [withSecret, job('b', '/b')];
    let failures = 1;
    const api = await plane.api();
    const post = api.post.bind(api);
    api.post = async <T>(path: string, options?: { body?: unknown }): Promise<T> => {
      if (path === '/api/worker/secrets/resolve') {
        if (failures-- > 0) throw new Error('503 unavailable');
        return { values: { 'api/token': 't' } } as T;
      }
      return await post<T>(path, options);
    };
    const w = startWorker({ ...plane, api: async () => api });
    // At once, not after the retry's back-off (at least 1 s).
    expect(await until(() => w.events.some((e) => e.path === '/b'), 800)).toBe(true);
    expect(w.events.some((e) => e.path === '/flaky')).toBe(false);
    expect(await until(() => w.events.some((e) => e.path === '/flaky'), 5_000)).toBe(true);
    expect(starts(w.log, 'b')).toBe(1);
    w.stop();
    await w.done;
  });

  it('backs off while the control plane is down and catches up when it is back', async () => {
    const plane = fakeControlPlane();
    plane.state.down = true;
    plane.state.deployed = [job('a', '/a1')];
    const w = startWorker(plane);
    expect(await until(() => w.log.some((l) => l.includes('ECONNREFUSED')))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const attempts = w.log.filter((l) => l.startsWith('control plane unreachable')).length;
    expect(attempts).toBeLessThanOrEqual(2); // waits between attempts, does not spin
    plane.state.down = false;
    expect(await until(() => w.events.some((e) => e.path === '/a1'), 8_000)).toBe(true);
    expect(
      await until(() =>
        plane.state.heartbeats.some((h) => h.jobs.some((j) => j.name === 'a' && j.state === 'running')),
      ),
    ).toBe(true);
    w.stop();
    await w.done;
  }, 15_000);
});
