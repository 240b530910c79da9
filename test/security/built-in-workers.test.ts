/**
 * Built-in workers are always there (the contract lists them in every worker list): `cloud`
 * everywhere, and `local` in the local stack, which writes its record and key itself at each
 * start. An admin could delete `local` (and rotate its key) through the API: its runtime then
 * stopped, `sluice worker create local` was refused as built in, and only a restart of the
 * stack brought it back. Both are now refused, as they are for `cloud`, and nothing changes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { authServices } from '../../functions/auth/services.ts';
import { createWorker } from '../../functions/workers/registry.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let localKey: string;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  // As local/local-worker.ts writes it when the stack starts.
  localKey = await createWorker(await authServices(t.deps).store(), 'default', 'local', { builtin: 'local' });
});
afterAll(async () => {
  await t.close();
});

it('refuses to delete or re-key a built-in worker, and changes nothing', async () => {
  for (const id of ['local', 'cloud']) {
    const removed = await t.request(`/api/workers/${id}`, { method: 'DELETE', headers: admin });
    expect(removed.status).toBe(409);
    expect((await json(removed)).error.message).toBe(`the built-in ${id} worker cannot be deleted`);
    const rotated = await t.request(`/api/workers/${id}/rotate-key`, jsonInit('POST', {}, admin));
    expect(rotated.status).toBe(409);
    expect((await json(rotated)).error.message).toMatch(new RegExp(`^the built-in ${id} worker's key`));
  }
  const workers = await json(await t.request('/api/workers', { headers: admin }));
  expect(workers.map((w: { id: string }) => w.id)).toEqual(expect.arrayContaining(['cloud', 'local']));
  // Its key still works.
  const token = await apiKeyToken(t, localKey);
  expect((await t.request('/api/worker/jobs', { headers: bearer(token) })).status).toBe(200);
});
