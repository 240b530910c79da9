import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let w1: Record<string, string>;
let w2: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const keys: Record<string, string> = {};
  for (const id of ['w1', 'w2'])
    keys[id] = (await json(await t.request('/api/workers', jsonInit('POST', { id }, admin)))).key;
  w1 = bearer(await apiKeyToken(t, keys.w1!));
  w2 = bearer(await apiKeyToken(t, keys.w2!));
});
afterAll(() => t.close());

const poll = async (headers: Record<string, string>, wait = '5s') =>
  (await json(await t.request(`/api/worker/messages?wait=${wait}`, { headers }))).messages as Record<
    string,
    unknown
  >[];

describe('worker messages', () => {
  it('delivers a worker its own messages by long poll until it acknowledges them', async () => {
    await t.request('/api/contexts/update-worker-map/w1', jsonInit('POST', { pinned: 1 }, admin));
    const messages = await poll(w1);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      type: 'context-changed',
      payload: { scope: 'worker', worker: 'w1', context: { pinned: 1 } },
    });
    expect(typeof messages[0]!.ack_id).toBe('string');
    const ack = await t.request(
      '/api/worker/messages/ack',
      jsonInit('POST', { ack_ids: [messages[0]!.ack_id] }, w1),
    );
    expect(ack.status).toBe(204);
    const started = Date.now();
    expect(await poll(w1, '1s')).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(await poll(w2, '1s')).toEqual([]);
  }, 30_000);

  it('sends a global change to every worker', async () => {
    await t.request('/api/contexts/update-global', jsonInit('POST', { region: 'eu' }, admin));
    for (const worker of [w1, w2]) {
      const messages = await poll(worker);
      expect(messages.map((m) => (m.payload as { scope: string }).scope)).toEqual(['global']);
      await t.request(
        '/api/worker/messages/ack',
        jsonInit('POST', { ack_ids: messages.map((m) => m.ack_id) }, worker),
      );
    }
  }, 30_000);

  it('refuses the worker routes to non-worker tokens', async () => {
    expect((await t.request('/api/worker/messages?wait=1s', { headers: admin })).status).toBe(403);
    expect((await t.request('/api/worker/jobs', { headers: admin })).status).toBe(403);
  });
});

describe('heartbeats', () => {
  it('marks the worker online, records first-seen once, and updates its deployment states', async () => {
    const yaml = 'name: hb-job\ninput:\n  http-poll:\n    url: http://example.com\noutput:\n  print: {}\n';
    await t.request('/api/jobs/hb-job', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    await t.request('/api/jobs/hb-job/deploy', jsonInit('POST', { workers: ['w2'] }, admin));
    expect((await json(await t.request('/api/workers/w2', { headers: admin }))).state).toBe('offline');

    for (const state of ['running', 'running', 'failed'] as const) {
      const res = await t.request(
        '/api/worker/heartbeat',
        jsonInit(
          'POST',
          { jobs: [{ name: 'hb-job', state, ...(state === 'failed' ? { error: 'boom' } : {}) }] },
          w2,
        ),
      );
      expect(res.status).toBe(204);
    }
    const worker = await json(await t.request('/api/workers/w2', { headers: admin }));
    expect(worker.state).toBe('online');
    expect(worker.jobs).toEqual(['hb-job']);
    const job = await json(await t.request('/api/jobs/hb-job', { headers: admin }));
    expect(job.deployments).toEqual([expect.objectContaining({ worker: 'w2', state: 'failed' })]);
    const events = await json(
      await t.request('/api/events?worker=w2&type=worker-first-seen,job-state-transition', {
        headers: admin,
      }),
    );
    expect(events.events.map((e: { type: string }) => e.type)).toEqual([
      'worker-first-seen',
      'job-state-transition',
      'job-state-transition',
    ]);
  });

  it('refuses bad heartbeats', async () => {
    const res = await t.request(
      '/api/worker/heartbeat',
      jsonInit('POST', { jobs: [{ name: 'x', state: 'dancing' }] }, w2),
    );
    expect(res.status).toBe(400);
  });
});

describe('telemetry and fingerprints', () => {
  it('takes job telemetry into the event log', async () => {
    const res = await t.request(
      '/api/worker/events',
      jsonInit('POST', { events: [{ type: 'job-metrics', job: 'hb-job', payload: { events: 3 } }] }, w2),
    );
    expect(res.status).toBe(202);
    const events = await json(await t.request('/api/events?type=job-metrics&worker=w2', { headers: admin }));
    expect(events.events).toEqual([
      expect.objectContaining({
        type: 'job-metrics',
        source: 'job',
        worker: 'w2',
        job: 'hb-job',
        payload: { events: 3 },
      }),
    ]);
    expect(
      (await t.request('/api/worker/events', jsonInit('POST', { events: [{ type: 'made-up' }] }, w2))).status,
    ).toBe(400);
  });

  it('checks and commits fingerprints for jobs deployed to the worker only', async () => {
    const check = (headers: Record<string, string>) =>
      t.request(
        '/api/worker/fingerprints/check',
        jsonInit('POST', { job: 'hb-job', keys: ['a', 'b'] }, headers),
      );
    expect(await json(await check(w2))).toEqual({ seen: [] });
    const commit = await t.request(
      '/api/worker/fingerprints/commit',
      jsonInit('POST', { job: 'hb-job', keys: ['a'], max_age: '1h' }, w2),
    );
    expect(commit.status).toBe(204);
    expect(await json(await check(w2))).toEqual({ seen: ['a'] });
    expect((await check(w1)).status).toBe(403);
  });
});

describe('the message stream', () => {
  it('delivers the worker’s messages as server-sent events, opened with a single-use ticket', async () => {
    const { ticket } = await json(
      await t.request('/api/worker/stream-ticket', { method: 'POST', headers: w1 }),
    );
    const controller = new AbortController();
    const res = await t.request(`/api/worker/stream?ticket=${ticket}`, { signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    await t.request('/api/contexts/update-worker-map/w1', jsonInit('POST', { streamed: true }, admin));
    const reader = res.body!.getReader();
    let text = '';
    const deadline = Date.now() + 20_000;
    while (!text.includes('"streamed":true') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    // Ends the stream on the server too: its loop must not read Firestore after the app closed.
    await reader.cancel();
    expect(text).toContain('event: message');
    const data = JSON.parse(
      text
        .split('\n')
        .find((l) => l.startsWith('data: ') && l.includes('streamed'))!
        .slice(6),
    );
    expect(data).toMatchObject({ type: 'context-changed', payload: { context: { streamed: true } } });
    expect(typeof data.ack_id).toBe('string');
  }, 30_000);
});

describe('offline workers', () => {
  it('records worker-offline once when a worker misses three heartbeats', async () => {
    const { sweepOfflineWorkers } = await import('../../functions/workers/offline-sweep.ts');
    await t.request('/api/worker/heartbeat', jsonInit('POST', { jobs: [] }, w1));
    const quick = { ...t.deps, config: { ...t.deps.config, heartbeatInterval: '10ms' } };
    await new Promise((r) => setTimeout(r, 50));
    expect(await sweepOfflineWorkers(quick)).toContain('w1');
    expect(await sweepOfflineWorkers(quick)).not.toContain('w1');
    const events = await json(
      await t.request('/api/events?type=worker-offline&worker=w1', { headers: admin }),
    );
    expect(events.events).toHaveLength(1);
  });
});
