/**
 * A worker keeps its jobs' fingerprints in the control plane (`apiFingerprints`). The routes
 * take at most 1,000 keys a request, and a run can finish more objects than that between
 * two deliveries (empty objects, objects its filter empties, many one-line objects): the
 * runtime sent them all in one request, which was refused (400), and the run failed and read
 * them all again next time. It now sends them 1,000 at a time.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiFingerprints } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { inProcessWorkerApi } from '../helpers/worker-api.ts';
import { apiWorker, deployJob, type Headers } from '../security/worker-helpers.ts';

let t: TestApp;
let worker: Headers;

beforeAll(async () => {
  t = await testApp();
  const admin = bearer(await bootstrapTestAdmin(t));
  worker = await apiWorker(t, admin, 'many-keys');
  await deployJob(t, admin, 'reads-many', ['many-keys']);
});
afterAll(async () => {
  await t.close();
});

it('commits and checks more keys than one request takes', async () => {
  const store = apiFingerprints(async () => inProcessWorkerApi(t, worker));
  const keys = Array.from({ length: 2_500 }, (_, i) => `gs://bucket/object-${i}.json#1`);
  await store.commit('reads-many', keys.slice(0, 2_400), 3_600_000);
  const seen = await store.seen('reads-many', keys);
  expect(seen.size).toBe(2_400);
  expect(seen.has(keys[2_399]!)).toBe(true);
  expect(seen.has(keys[2_400]!)).toBe(false);
}, 60_000);
