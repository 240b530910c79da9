/**
 * Creating a worker makes its record, its key (shown once) and its Pub/Sub subscription. The
 * subscription came after the record: when Pub/Sub refused it, the answer was a 500, the key
 * was lost, and a retry found the id taken (409). Now a failed create or enrollment leaves no
 * worker behind, and the retry succeeds.
 */
import { Topic } from '@google-cloud/pubsub';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await t.close();
});

/** Pub/Sub refuses the next subscription, as it does an identity without the permission. */
function refuseNextSubscription() {
  vi.spyOn(Topic.prototype, 'createSubscription').mockRejectedValueOnce(
    Object.assign(new Error('7 PERMISSION_DENIED: User not authorized to perform this action.'), { code: 7 }),
  );
}

it('a worker whose subscription could not be made is not created, and a retry creates it', async () => {
  refuseNextSubscription();
  const failed = await t.request('/api/workers', jsonInit('POST', { id: 'edge-9' }, admin));
  expect(failed.status).toBe(500);
  expect((await t.request('/api/workers/edge-9', { headers: admin })).status).toBe(404);

  const retried = await t.request('/api/workers', jsonInit('POST', { id: 'edge-9' }, admin));
  expect(retried.status).toBe(201);
  expect((await json(retried)).key).toMatch(/^slw_/);
});

it('an enrollment whose subscription could not be made is taken back, and a retry enrolls', async () => {
  const made = await t.request(
    '/api/enrollment-secrets',
    jsonInit('POST', { name: 'fleet', max_uses: 5 }, admin),
  );
  const { secret } = await json(made);
  refuseNextSubscription();
  const failed = await t.request('/api/workers/enroll', jsonInit('POST', { secret, id: 'edge-10' }));
  expect(failed.status).toBe(500);
  expect((await t.request('/api/workers/edge-10', { headers: admin })).status).toBe(404);

  const retried = await t.request('/api/workers/enroll', jsonInit('POST', { secret, id: 'edge-10' }));
  expect(retried.status).toBe(201);
});
