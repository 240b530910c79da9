import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

const SECRET = 'hunter2-but-much-longer-9f8e7d';
let t: TestApp;
let admin: Record<string, string>;
const seen: string[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(() => t.close());

async function call(path: string, init?: RequestInit) {
  const res = await t.request(path, init);
  seen.push(await res.clone().text());
  return res;
}

const JOB = (name: string) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: http://example.com/\n    headers:\n      authorization: 'Bearer \${secret|api/token}'\noutput:\n  print: {}\n`;

describe('secrets', () => {
  it('stores values encrypted, lists names only, and refuses non-admins', async () => {
    expect((await call('/api/secrets/api/token', jsonInit('PUT', { value: SECRET }, admin))).status).toBe(
      204,
    );
    const listed = await json(await call('/api/secrets', { headers: admin }));
    expect(listed).toEqual([{ scope: 'api', name: 'token', updated_at: expect.any(String) }]);
    const operator = bearer(await tokenFor(t, { role: 'operator' }));
    expect((await call('/api/secrets', { headers: operator })).status).toBe(403);
    const db = await t.deps.clients.firestore();
    const stored = await db.collection('tenants').doc('default').collection('secrets').get();
    expect(JSON.stringify(stored.docs.map((d) => d.data()))).not.toContain(SECRET);
  });

  it('refuses to deploy a job whose secret does not exist, and changes nothing', async () => {
    await call('/api/workers', jsonInit('POST', { id: 'sw1' }, admin));
    await call('/api/jobs/needs-missing', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: JOB('needs-missing').replace('api/token', 'api/missing'),
    });
    const res = await call('/api/jobs/needs-missing/deploy', jsonInit('POST', { workers: ['sw1'] }, admin));
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain('api/missing');
    expect((await json(await call('/api/jobs/needs-missing', { headers: admin }))).deployments).toEqual([]);
  });

  it('reveals a secret only to the worker running a job that uses it', async () => {
    const keys: Record<string, string> = {};
    for (const id of ['sw2', 'sw3'])
      keys[id] = (await json(await call('/api/workers', jsonInit('POST', { id }, admin)))).key;
    await call('/api/jobs/uses-secret', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: JOB('uses-secret'),
    });
    expect(
      (await call('/api/jobs/uses-secret/deploy', jsonInit('POST', { workers: ['sw2'] }, admin))).status,
    ).toBe(200);

    const sw2 = bearer(await apiKeyToken(t, keys.sw2!));
    const sw3 = bearer(await apiKeyToken(t, keys.sw3!));
    const jobs = await json(await call('/api/worker/jobs', { headers: sw2 }));
    expect(jobs[0].definition.input['http-poll'].headers.authorization).toBe('Bearer ${secret|api/token}');

    const ok = await t.request(
      '/api/worker/secrets/resolve',
      jsonInit('POST', { job: 'uses-secret', refs: ['api/token'] }, sw2),
    );
    expect(ok.status).toBe(200);
    expect((await json(ok)).values).toEqual({ 'api/token': SECRET });
    const other = await call(
      '/api/worker/secrets/resolve',
      jsonInit('POST', { job: 'uses-secret', refs: ['api/token'] }, sw3),
    );
    expect(other.status).toBe(403);
    const unused = await call(
      '/api/worker/secrets/resolve',
      jsonInit('POST', { job: 'uses-secret', refs: ['api/other'] }, sw2),
    );
    expect(unused.status).toBe(403);
  });

  it('never shows the value in other API answers, stored jobs, events or logs', async () => {
    seen.push(JSON.stringify(await json(await t.request('/api/events?limit=1000', { headers: admin }))));
    const db = await t.deps.clients.firestore();
    for (const collection of ['jobs', 'events', 'outbox', 'contexts']) {
      const snap = await db.collection('tenants').doc('default').collection(collection).get();
      seen.push(JSON.stringify(snap.docs.map((d) => d.data())));
    }
    for (const text of [...seen, t.logs()]) expect(text).not.toContain(SECRET);
  });
});
