/**
 * `local` is built in only where the local stack made it: tenant `default` of the local
 * stack. Elsewhere (another tenant, a control plane in the cloud) a deploy to it was
 * accepted and stayed `pending` for ever, with nothing saying why; now it is refused like
 * any unknown worker, and so is a message to it. `cloud` is built in everywhere.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { authServices } from '../../functions/auth/services.ts';
import { createWorker } from '../../functions/workers/registry.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
const YAML =
  'name: health\ninput:\n  http-poll:\n    url: https://example.org/status\noutput:\n  print: {}\n';

beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

async function savedJob(headers: Record<string, string>) {
  const saved = await t.request('/api/jobs/health', {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body: YAML,
  });
  expect(saved.status).toBe(201);
}

it('a deploy or message to local where the stack made no local worker is refused, naming it; nothing changes', async () => {
  await bootstrapTestAdmin(t);
  const acme = bearer(await tokenFor(t, { role: 'admin', tenant: 'acme' }));
  await savedJob(acme);
  const before = await json(await t.request('/api/jobs/health', { headers: acme }));
  const deployed = await t.request('/api/jobs/health/deploy', jsonInit('POST', { workers: ['local'] }, acme));
  expect(deployed.status).toBe(400);
  expect((await json(deployed)).error.message).toBe('unknown worker(s): local');
  expect(await json(await t.request('/api/jobs/health', { headers: acme }))).toEqual(before);
  const message = await t.request(
    '/api/messages',
    jsonInit('POST', { type: 'user-generated', worker: 'local', payload: { a: 1 } }, acme),
  );
  expect(message.status).toBe(404);
  expect((await json(message)).error.message).toBe('unknown worker: local');
  // `cloud` is built in everywhere.
  const onCloud = await t.request('/api/jobs/health/deploy', jsonInit('POST', { workers: ['cloud'] }, acme));
  expect(onCloud.status).toBe(200);
});

it('where the stack made it, local takes deploys', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  await createWorker(await authServices(t.deps).store(), 'default', 'local', { builtin: 'local' });
  await savedJob(admin);
  const deployed = await t.request(
    '/api/jobs/health/deploy',
    jsonInit('POST', { workers: ['local'] }, admin),
  );
  expect(deployed.status).toBe(200);
  expect((await json(deployed)).deployments).toEqual([expect.objectContaining({ worker: 'local' })]);
});
