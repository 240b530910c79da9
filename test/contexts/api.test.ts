import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(() => t.close());

const post = (path: string, body: unknown, headers = admin) =>
  t.request(`/api/contexts/${path}`, jsonInit('POST', body, headers));
const get = async (path: string, headers = admin) =>
  await json(await t.request(`/api/contexts/${path}`, { headers }));

describe('the seed’s precedence example', () => {
  it('job default 10m, global 5m, worker-pinned 30m; a job override beats all three', async () => {
    // The job's definition defaults come from the stored job.
    const yaml =
      "name: poller\ncontext:\n  interval: 10m\ninput:\n  http-poll:\n    url: http://example.com\n    trigger:\n      interval:\n        duration: '{{interval}}'\noutput:\n  print: {}\n";
    const saved = await t.request('/api/jobs/poller', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(saved.status).toBe(201);
    expect((await get('resolve?job=poller&worker=w1')).context.interval).toBe('10m');

    await post('update-global', { interval: '5m' });
    await post('update-worker-map/w1', { interval: '30m' });
    const onPinned = await get('resolve?job=poller&worker=w1');
    expect(onPinned.context).toMatchObject({ interval: '30m', job: 'poller', worker: 'w1' });
    expect(onPinned.sources).toMatchObject({ interval: 'worker', job: 'builtin', worker: 'builtin' });
    expect((await get('resolve?job=poller&worker=w2')).context.interval).toBe('5m');
    expect((await get('resolve?job=poller&worker=w2')).sources.interval).toBe('global');

    await post('update-global', { interval: null });
    expect(await get('resolve?job=poller&worker=w2')).toMatchObject({
      context: { interval: '10m' },
      sources: { interval: 'definition' },
    });

    await post('update-job-map/poller', { interval: '1m' });
    expect(await get('resolve?job=poller&worker=w1')).toMatchObject({
      context: { interval: '1m' },
      sources: { interval: 'job' },
    });
  });
});

describe('updates', () => {
  it('merges key by key, replaces objects whole, deletes on null, and answers with the whole map', async () => {
    await post('update-global', { a: 1, obj: { x: 1, y: 2 } });
    const res = await post('update-global', { b: [1, [2, 3]], obj: { x: 9 }, a: null });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ context: { obj: { x: 9 }, b: [1, [2, 3]] } });
    expect(await get('global')).toEqual({ obj: { x: 9 }, b: [1, [2, 3]] });
  });

  it('keeps every key of 50 concurrent updates', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post('update-worker-map/busy', { [`k${i}`]: i })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    const map = await get('worker/busy');
    expect(Object.keys(map).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `k${i}`).sort());
  }, 60_000);

  it('replaces with nomerge, and merges after nomerge', async () => {
    await post('update-worker-map/w9', { a: 1, b: 2 });
    const replaced = await json(await post('update-worker-nomerge/w9', { c: 3 }));
    expect(replaced).toEqual({ context: { c: 3 } });
    expect(await json(await post('update-worker-map/w9', { d: 4 }))).toEqual({ context: { c: 3, d: 4 } });
    expect(await get('worker/w9')).toEqual({ c: 3, d: 4 });
    expect(await get('worker/nobody')).toEqual({});
    expect(await get('job/nothing')).toEqual({});
  });

  it('round-trips export and import exactly', async () => {
    await post('update-global', { region: 'eu', nested: { deep: [1, { two: 2 }] }, flag: true });
    const exported = await get('export');
    expect(exported.format).toBe('sluice-context/v1');
    await post('update-global', { region: 'us', extra: 1 });
    const imported = await post('import', exported);
    expect(imported.status).toBe(200);
    expect(await get('global')).toEqual(exported.global);
    expect(JSON.stringify(await get('global'))).toBe(JSON.stringify(exported.global));
  });
});

describe('bad bodies change nothing', () => {
  const deep = (n: number): unknown => (n === 0 ? 'x' : { d: deep(n - 1) });
  const cases: [string, unknown][] = [
    ['an array', [1, 2]],
    ['a string', 'hello'],
    ['null', null],
    ['depth 40', { deep: deep(40) }],
    ['a 300 KiB map', { big: 'x'.repeat(300 * 1024) }],
    ['key job', { job: 1 }],
    ['key worker', { worker: 1 }],
    ['key "a b"', { 'a b': 1 }],
    ['an empty key', { '': 1 }],
    ['key __proto__', JSON.parse('{"__proto__": {"polluted": 1}}')],
    ['key constructor', { constructor: 1 }],
  ];

  it.each(cases)(
    'refuses %s with 400 and leaves the maps byte-for-byte as they were',
    async (_name, body) => {
      await post('update-global', { keep: 'me' });
      const before = JSON.stringify(await get('global'));
      const beforeWorker = JSON.stringify(await get('worker/w1'));
      for (const path of [
        'update-global',
        'update-worker-map/w1',
        'update-worker-nomerge/w1',
        'update-job-map/j1',
      ]) {
        const res = await post(path, body);
        expect(res.status, path).toBe(400);
        expect((await json(res)).error.code).toBe('invalid_request');
      }
      expect(JSON.stringify(await get('global'))).toBe(before);
      expect(JSON.stringify(await get('worker/w1'))).toBe(beforeWorker);
    },
  );

  it('refuses malformed JSON and a wrong content type', async () => {
    const malformed = await t.request('/api/contexts/update-global', {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"a":',
    });
    expect(malformed.status).toBe(400);
    const text = await t.request('/api/contexts/update-global', {
      method: 'POST',
      headers: { ...admin, 'content-type': 'text/plain' },
      body: 'a=1',
    });
    expect(text.status).toBe(415);
  });

  it('refuses an import of another format', async () => {
    const res = await post('import', { format: 'other/v9', global: {} });
    expect(res.status).toBe(400);
  });
});

describe('access', () => {
  const routes: [string, string, unknown?][] = [
    ['POST', 'update-global', { a: 1 }],
    ['POST', 'update-job-map/j', { a: 1 }],
    ['POST', 'update-worker-map/w', { a: 1 }],
    ['POST', 'update-worker-nomerge/w', { a: 1 }],
    ['GET', 'global'],
    ['GET', 'worker/w'],
    ['GET', 'job/j'],
    ['GET', 'export'],
    ['POST', 'import', { format: 'sluice-context/v1', global: {} }],
    ['GET', 'resolve?job=j&worker=w'],
  ];

  it('gives viewers and workers 403 and anonymous callers 401 on every context route', async () => {
    const viewer = bearer(await tokenFor(t, { role: 'viewer' }));
    const operator = bearer(await tokenFor(t, { role: 'operator' }));
    const worker = bearer(await tokenFor(t, { role: 'worker' }));
    for (const [method, path, body] of routes) {
      for (const [who, headers, status] of [
        ['viewer', viewer, 403],
        ['operator', operator, 403],
        ['worker', worker, 403],
        ['nobody', {}, 401],
      ] as const) {
        const init = body === undefined ? { method, headers } : jsonInit(method, body, headers);
        const res = await t.request(`/api/contexts/${path}`, init);
        expect(res.status, `${who} ${method} ${path}`).toBe(status);
      }
    }
  });

  it('keeps tenants apart', async () => {
    const other = bearer(await tokenFor(t, { role: 'admin', tenant: 'ctx-other' }));
    await post('update-global', { secret_plan: 'default-only' });
    expect(await get('global', other)).toEqual({});
  });
});
