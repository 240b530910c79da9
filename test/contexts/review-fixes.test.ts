/**
 * Review findings on contexts.
 *
 * B: the `context-changed` event of a replace (update-worker-nomerge, import) recorded only
 * the keys of the new map, so a replace by `{}` that deleted three keys read `keys: []`.
 * Every event now says `mode` (`merge` or `replace`), and a replace also `removed`.
 *
 * C: a worker's (or job's) context map outlived it: a worker enrolled later under the same
 * id got the old map. Deleting a worker or a job now deletes its map in the same transaction.
 */
import { Topic } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
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
const get = async (path: string) => await json(await t.request(`/api/contexts/${path}`, { headers: admin }));

async function contextEvents(filter: string): Promise<{ payload: Record<string, unknown> }[]> {
  const res = await t.request(`/api/events?type=context-changed&${filter}`, { headers: admin });
  expect(res.status).toBe(200);
  return (await json(res)).events;
}

describe('B: the context-changed event of a replace', () => {
  it('says what a worker-map replace removed, and which mode each change was', async () => {
    expect((await post('update-worker-map/rw1', { a: 1, b: 2, c: 3 })).status).toBe(200);
    expect(await json(await post('update-worker-nomerge/rw1', {}))).toEqual({ context: {} });
    const [merge, replace] = (await contextEvents('worker=rw1')).map((e) => e.payload);
    expect(merge).toEqual({
      scope: 'worker',
      worker: 'rw1',
      version: 1,
      keys: ['a', 'b', 'c'],
      mode: 'merge',
    });
    expect(replace).toEqual({
      scope: 'worker',
      worker: 'rw1',
      version: 2,
      keys: [],
      mode: 'replace',
      removed: ['a', 'b', 'c'],
    });
  });

  it('keeps the keys of the new map in keys and lists only the keys that went in removed', async () => {
    await post('update-worker-map/rw2', { a: 1, b: 2 });
    await post('update-worker-nomerge/rw2', { b: 5, d: 4 });
    const events = await contextEvents('worker=rw2');
    expect(events.at(-1)!.payload).toMatchObject({ keys: ['b', 'd'], mode: 'replace', removed: ['a'] });
  });

  it('says what an import removed from the global map', async () => {
    await post('update-global', { g1: 1, g2: 2 });
    const imported = await post('import', { format: 'sluice-context/v1', global: { g2: 'two', g3: 3 } });
    expect(imported.status).toBe(200);
    const events = (await contextEvents('source=server')).filter((e) => e.payload.scope === 'global');
    expect(events.at(-2)!.payload).toMatchObject({ keys: ['g1', 'g2'], mode: 'merge' });
    expect(events.at(-2)!.payload).not.toHaveProperty('removed');
    expect(events.at(-1)!.payload).toMatchObject({ keys: ['g2', 'g3'], mode: 'replace', removed: ['g1'] });
  });
});

describe('C: a deleted worker’s context map', () => {
  it('is gone with the worker: a worker enrolled again under its id inherits nothing', async () => {
    expect((await t.request('/api/workers', jsonInit('POST', { id: 'enr1' }, admin))).status).toBe(201);
    expect((await post('update-worker-map/enr1', { pinned: 'old-bucket' })).status).toBe(200);
    expect(await get('worker/enr1')).toEqual({ pinned: 'old-bucket' });

    expect((await t.request('/api/workers/enr1', { method: 'DELETE', headers: admin })).status).toBe(204);
    expect(await get('worker/enr1')).toEqual({});
    // Recorded like any change of the map: a replace that removed every key.
    expect((await contextEvents('worker=enr1')).at(-1)!.payload).toEqual({
      scope: 'worker',
      worker: 'enr1',
      version: 2,
      keys: [],
      mode: 'replace',
      removed: ['pinned'],
    });

    const secret = await json(
      await t.request('/api/enrollment-secrets', jsonInit('POST', { name: 'fleet' }, admin)),
    );
    const enrolled = await t.request(
      '/api/workers/enroll',
      jsonInit('POST', { secret: secret.secret, id: 'enr1' }),
    );
    expect(enrolled.status).toBe(201);
    expect(await get('worker/enr1')).toEqual({});
    const resolved = await get('resolve?job=any&worker=enr1');
    expect(resolved.context).not.toHaveProperty('pinned');
  });

  it('stays when the delete fails (no such worker): a map set ahead of a worker is kept', async () => {
    expect((await post('update-worker-map/future', { pinned: 'x' })).status).toBe(200);
    const events = await contextEvents('worker=future');
    expect((await t.request('/api/workers/future', { method: 'DELETE', headers: admin })).status).toBe(404);
    expect(await get('worker/future')).toEqual({ pinned: 'x' });
    expect(await contextEvents('worker=future')).toEqual(events);
  });

  it('stays when an enrollment takes itself back (its subscription could not be made)', async () => {
    expect((await post('update-worker-map/enr2', { pinned: 'ahead' })).status).toBe(200);
    const secret = await json(
      await t.request('/api/enrollment-secrets', jsonInit('POST', { name: 'fleet-2' }, admin)),
    );
    const refused = vi
      .spyOn(Topic.prototype, 'createSubscription')
      .mockRejectedValueOnce(Object.assign(new Error('7 PERMISSION_DENIED: no'), { code: 7 }));
    const failed = await t.request(
      '/api/workers/enroll',
      jsonInit('POST', { secret: secret.secret, id: 'enr2' }),
    );
    refused.mockRestore();
    expect(failed.status).toBe(500);
    expect((await t.request('/api/workers/enr2', { headers: admin })).status).toBe(404);
    expect(await get('worker/enr2')).toEqual({ pinned: 'ahead' });
  });
});

describe('C: a deleted job’s context map', () => {
  const YAML = (name: string) =>
    `name: ${name}\ninput:\n  http-poll:\n    url: http://example.com/{{path}}\noutput:\n  print: {}\n`;
  const put = (name: string) =>
    t.request(`/api/jobs/${name}`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: YAML(name),
    });

  it('is gone with the job: a job saved again under its name inherits nothing', async () => {
    expect((await put('cj1')).status).toBe(201);
    expect((await post('update-job-map/cj1', { path: 'old' })).status).toBe(200);
    expect((await t.request('/api/jobs/cj1', { method: 'DELETE', headers: admin })).status).toBe(204);
    expect(await get('job/cj1')).toEqual({});
    expect((await contextEvents('job=cj1')).at(-1)!.payload).toMatchObject({
      scope: 'job',
      job: 'cj1',
      keys: [],
      mode: 'replace',
      removed: ['path'],
    });
    expect((await put('cj1')).status).toBe(201);
    expect(await get('job/cj1')).toEqual({});
  });

  it('stays when the delete is refused (the job is deployed)', async () => {
    expect((await put('cj2')).status).toBe(201);
    expect((await post('update-job-map/cj2', { path: 'kept' })).status).toBe(200);
    expect((await t.request('/api/workers', jsonInit('POST', { id: 'cjw' }, admin))).status).toBe(201);
    expect(
      (await t.request('/api/jobs/cj2/deploy', jsonInit('POST', { workers: ['cjw'] }, admin))).status,
    ).toBe(200);
    const events = await contextEvents('job=cj2');
    expect((await t.request('/api/jobs/cj2', { method: 'DELETE', headers: admin })).status).toBe(409);
    expect(await get('job/cj2')).toEqual({ path: 'kept' });
    expect(await contextEvents('job=cj2')).toEqual(events);
  });
});
