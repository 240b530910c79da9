import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let worker: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const { key } = await json(await t.request('/api/workers', jsonInit('POST', { id: 'vw1' }, admin)));
  worker = bearer(await apiKeyToken(t, key));
});
afterAll(() => t.close());

describe('variables', () => {
  it('sets, reads, lists and deletes, recording events', async () => {
    expect((await t.request('/api/variables/ENV', jsonInit('PUT', { value: 'prod' }, admin))).status).toBe(
      204,
    );
    expect(await json(await t.request('/api/variables/ENV', { headers: admin }))).toMatchObject({
      name: 'ENV',
      value: 'prod',
    });
    expect(
      (await json(await t.request('/api/variables', { headers: admin }))).map(
        (v: { name: string }) => v.name,
      ),
    ).toEqual(['ENV']);
    expect((await t.request('/api/variables/ENV', { method: 'DELETE', headers: admin })).status).toBe(204);
    expect((await t.request('/api/variables/ENV', { headers: admin })).status).toBe(404);
    expect((await t.request('/api/variables/ENV', { method: 'DELETE', headers: admin })).status).toBe(404);
    const events = await json(
      await t.request('/api/events?type=variable,variable-deleted', { headers: admin }),
    );
    expect(events.events.map((e: { type: string }) => e.type)).toEqual(['variable', 'variable-deleted']);
  });

  it('sends update-variable to every worker, and gives a worker only what its jobs reference', async () => {
    await t.request('/api/variables/REGION', jsonInit('PUT', { value: 'eu' }, admin));
    const { messages } = await json(await t.request('/api/worker/messages?wait=5s', { headers: worker }));
    expect(messages.map((m: { type: string }) => m.type)).toContain('update-variable');
    // vw1 has no jobs (a worker whose job references one: test/security/worker-variables-scope.test.ts).
    expect(await json(await t.request('/api/worker/variables', { headers: worker }))).toEqual({
      variables: {},
    });
  }, 30_000);

  it('refuses bad names and non-admins', async () => {
    expect((await t.request('/api/variables/1bad', jsonInit('PUT', { value: 'x' }, admin))).status).toBe(400);
    expect((await t.request('/api/variables/OK', jsonInit('PUT', { value: 7 }, admin))).status).toBe(400);
    const viewer = bearer(await tokenFor(t, { role: 'viewer' }));
    expect((await t.request('/api/variables', { headers: viewer })).status).toBe(403);
  });
});
