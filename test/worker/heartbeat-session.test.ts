/**
 * One runtime per worker (`session` on POST /api/worker/heartbeat, a Sluice extension):
 * the newest claim wins, and a heartbeat from a runtime taken over since is refused with
 * the contract's 409 body and records nothing (its job states would overwrite the new
 * runtime's). Heartbeats without a session (the contract's body) go on as before.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let worker: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const created = await json(await t.request('/api/workers', jsonInit('POST', { id: 'w1' }, admin)));
  worker = bearer(await apiKeyToken(t, created.key));
  await t.request('/api/jobs/status', {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: 'name: status\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  print: {}\n',
  });
  expect(
    (await t.request('/api/jobs/status/deploy', jsonInit('POST', { workers: ['w1'] }, admin))).status,
  ).toBe(200);
});
afterAll(() => t.close());

const beat = (state: string, session?: { id: string; claim?: boolean }) =>
  t.request(
    '/api/worker/heartbeat',
    jsonInit('POST', { jobs: [{ name: 'status', state }], ...(session ? { session } : {}) }, worker),
  );
const deployment = async () =>
  (await json(await t.request('/api/jobs/status', { headers: admin }))).deployments[0] as { state: string };

it('lets the newest claim win and refuses the runtime it took over, recording nothing of it', async () => {
  expect((await beat('running', { id: 'runtime-a-000', claim: true })).status).toBe(204);
  expect((await beat('running', { id: 'runtime-a-000' })).status).toBe(204);
  // Another runtime starts: its claim takes the worker over.
  expect((await beat('running', { id: 'runtime-b-000', claim: true })).status).toBe(204);
  const refused = await beat('failed', { id: 'runtime-a-000' });
  expect(refused.status).toBe(409);
  const body = await json(refused);
  expect(body.error.code).toBe('conflict');
  expect(body.error.message).toContain('another runtime took over worker w1');
  expect(await deployment()).toMatchObject({ state: 'running' });
  expect((await beat('idle', { id: 'runtime-b-000' })).status).toBe(204);
  expect(await deployment()).toMatchObject({ state: 'idle' });
});

it("takes the contract's heartbeat without a session as before, and refuses a malformed session", async () => {
  expect((await beat('running')).status).toBe(204);
  expect(await deployment()).toMatchObject({ state: 'running' });
  const bad = await beat('failed', { id: 'a b' });
  expect(bad.status).toBe(400);
  expect(await deployment()).toMatchObject({ state: 'running' });
});
