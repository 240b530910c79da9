// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * Issue 16, item 5: a deleted worker left its deployments behind, so a new worker enrolled
 * under the same id inherited the jobs and could resolve their secrets. Deleting a worker
 * now removes it from every job's deployments in the same transaction, with the events and
 * worker messages an undeploy records.
 *
 * Item 23 (worker part): the built-in ids `cloud` and `local` cannot be created or enrolled
 * through the API (the local stack writes `local` itself, see local/local-worker.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxCollection } from '../../functions/messaging/outbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { apiWorker, deployJob, events, type Headers, storedDeployments } from './worker-helpers.ts';

const SECRET = 'warehouse-password-91c2';
let t: TestApp;
let admin: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  expect((await t.request('/api/secrets/wh/pass', jsonInit('PUT', { value: SECRET }, admin))).status).toBe(
    204,
  );
});
afterAll(() => t.close());

let secrets = 0;
async function enrollmentSecret(): Promise<{ secret: string; id: string }> {
  const name = `es-${++secrets}`;
  const res = await t.request('/api/enrollment-secrets', jsonInit('POST', { name, max_uses: 5 }, admin));
  expect(res.status).toBe(201);
  return await json(res);
}

describe('deleting a worker', () => {
  it('removes it from every deployment, so a worker enrolled again under its id inherits nothing', async () => {
    await apiWorker(t, admin, 'gone');
    await apiWorker(t, admin, 'stays');
    const yaml =
      "name: wh-load\ninput:\n  http-poll:\n    url: 'http://example.com/?p=${secret|wh/pass}'\noutput:\n  print: {}\n";
    await deployJob(t, admin, 'wh-load', ['gone', 'stays'], yaml);
    await deployJob(t, admin, 'other', ['gone']);

    expect((await t.request('/api/workers/gone', { method: 'DELETE', headers: admin })).status).toBe(204);
    expect(Object.keys(await storedDeployments(t, 'wh-load'))).toEqual(['stays']);
    expect(Object.keys(await storedDeployments(t, 'other'))).toEqual([]);
    const removed = await events(t, admin, 'type=job-removed&worker=gone');
    expect(removed.map((e) => e.job).sort()).toEqual(['other', 'wh-load']);
    // The worker messages went out (or wait in the outbox for the drain), as an undeploy's do.
    const db = await t.deps.clients.firestore();
    const waiting = (await outboxCollection(db, 'default').get()).docs.map(
      (d) => d.get('message_json') as string,
    );
    expect(waiting.filter((m) => m.includes('deployed-job-removed') && m.includes('"gone"'))).toEqual([]);

    const { secret } = await enrollmentSecret();
    const enrolled = await t.request('/api/workers/enroll', jsonInit('POST', { secret, id: 'gone' }));
    expect(enrolled.status).toBe(201);
    const heir = bearer(await apiKeyToken(t, (await json(enrolled)).key));
    expect(await json(await t.request('/api/worker/jobs', { headers: heir }))).toEqual([]);
    const resolve = await t.request(
      '/api/worker/secrets/resolve',
      jsonInit('POST', { job: 'wh-load', refs: ['wh/pass'] }, heir),
    );
    expect(resolve.status).toBe(403);
    expect(await resolve.text()).not.toContain(SECRET);
  });
});

describe('built-in worker ids', () => {
  for (const id of ['cloud', 'local']) {
    it(`refuses to create or enroll a worker ${id}, and writes nothing`, async () => {
      const created = await t.request('/api/workers', jsonInit('POST', { id }, admin));
      expect(created.status).toBe(409);
      expect((await json(created)).error.code).toBe('conflict');

      const { secret, id: secretId } = await enrollmentSecret();
      const enrolled = await t.request('/api/workers/enroll', jsonInit('POST', { secret, id }));
      expect(enrolled.status).toBe(409);
      expect((await json(enrolled)).error.code).toBe('conflict');
      const secrets = await json(await t.request('/api/enrollment-secrets', { headers: admin }));
      const used = (secrets as { id: string; uses: number }[]).find((s) => s.id === secretId);
      expect(used?.uses).toBe(0);
      const db = await t.deps.clients.firestore();
      const stored = await db.collection('tenants').doc('default').collection('workers').doc(id).get();
      expect(stored.exists).toBe(false);
    });
  }
});
