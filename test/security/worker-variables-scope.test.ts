// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${dyn|..} is literal job text here
/**
 * A worker is trusted with the variables its jobs reference, and nothing else
 * (docs/security.md). `GET /api/worker/variables` gave any worker, even one just enrolled
 * with no job, every variable of its tenant, while on the user API variables are admin-only.
 * It now gives the variables referenced by the jobs deployed to the calling worker, as
 * rendered for it; `update-variable` messages carry the name only, and the worker runtime
 * fetches the new value through that route.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';
import { apiWorker, deployJob, type Headers } from './worker-helpers.ts';

const VALUES = { REGION: 'eu', DB_HOST: 'db.internal.example', PARTNER_ID: 'p-8c1e3f' };
let t: TestApp;
let admin: Headers;
let upstream: Server;
const hits: string[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  for (const [name, value] of Object.entries(VALUES))
    expect((await t.request(`/api/variables/${name}`, jsonInit('PUT', { value }, admin))).status).toBe(204);
  upstream = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

const base = () => `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
const pollJob = (name: string, path: string) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: '${base()}${path}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`;

async function variablesOf(worker: Headers, job?: string) {
  const res = await t.request(`/api/worker/variables${job ? `?job=${job}` : ''}`, { headers: worker });
  return { status: res.status, body: await json(res) };
}

describe('GET /api/worker/variables', () => {
  it('gives a worker with no jobs no variables', async () => {
    const idle = await apiWorker(t, admin, 'vars-idle');
    expect(await variablesOf(idle)).toEqual({ status: 200, body: { variables: {} } });
    // A change is announced to every worker by name only: the value stays behind the route.
    const rotated = 'p-rotated-51d2';
    expect(
      (await t.request('/api/variables/PARTNER_ID', jsonInit('PUT', { value: rotated }, admin))).status,
    ).toBe(204);
    const heard: { type: string; payload: unknown }[] = [];
    for (let i = 0; i < 5 && !heard.some((m) => m.type === 'update-variable'); i++)
      heard.push(
        ...(await json(await t.request('/api/worker/messages?wait=3s', { headers: idle }))).messages,
      );
    expect(heard.find((m) => m.type === 'update-variable')?.payload).toEqual({ name: 'PARTNER_ID' });
    expect(JSON.stringify(heard)).not.toContain(rotated);
    expect(await variablesOf(idle)).toEqual({ status: 200, body: { variables: {} } });
  }, 30_000);

  it('gives a worker exactly the variables its deployed jobs reference, as rendered for it', async () => {
    const busy = await apiWorker(t, admin, 'vars-busy');
    const other = await apiWorker(t, admin, 'vars-other');
    await deployJob(
      t,
      admin,
      'uses-region',
      ['vars-busy'],
      pollJob('uses-region', '/${dyn|REGION}/${dyn|TIER||free}'),
    );
    expect(await variablesOf(busy)).toEqual({ status: 200, body: { variables: { REGION: 'eu' } } });
    expect(await variablesOf(busy, 'uses-region')).toEqual({
      status: 200,
      body: { variables: { REGION: 'eu' } },
    });
    // Another worker gets nothing of that job's, and may not ask for it by name.
    expect(await variablesOf(other)).toEqual({ status: 200, body: { variables: {} } });
    expect((await variablesOf(other, 'uses-region')).status).toBe(403);

    // A reference that a worker's own context brings into a job counts for that worker only.
    await t.request(
      '/api/contexts/update-worker-map/vars-other',
      jsonInit('POST', { db: '${dyn|DB_HOST}' }, admin),
    );
    await t.request('/api/contexts/update-worker-map/vars-busy', jsonInit('POST', { db: 'none' }, admin));
    await deployJob(
      t,
      admin,
      'uses-context',
      ['vars-busy', 'vars-other'],
      pollJob('uses-context', '/{{db}}'),
    );
    expect(await variablesOf(other)).toEqual({
      status: 200,
      body: { variables: { DB_HOST: VALUES.DB_HOST } },
    });
    expect(await variablesOf(busy)).toEqual({ status: 200, body: { variables: { REGION: 'eu' } } });
    expect(await variablesOf(busy, 'uses-context')).toEqual({ status: 200, body: { variables: {} } });
  });

  it('keeps the worker runtime working: it runs with the value and follows a change', async () => {
    const worker = await startInProcessWorker(t, admin, 'vars-runtime');
    try {
      await deployJob(
        t,
        admin,
        'runtime-region',
        ['vars-runtime'],
        pollJob('runtime-region', '/rt/${dyn|REGION}'),
      );
      await worker.until(() => hits.includes('/rt/eu'), 20_000, 'a request with the value');
      expect((await t.request('/api/variables/REGION', jsonInit('PUT', { value: 'us' }, admin))).status).toBe(
        204,
      );
      await worker.until(() => hits.includes('/rt/us'), 20_000, 'a request with the new value');
    } finally {
      await worker.stop();
    }
  }, 60_000);
});
