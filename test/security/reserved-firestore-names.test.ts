// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${dyn|..} is literal job text here
/**
 * Names Firestore keeps for itself (`__name__`, any `__…__`) as variable names and context
 * keys. A variable named `__x__` answered 500 after seconds of retries (`Resource id "__x__"
 * is invalid because it is reserved`), and a job referencing `${dyn|__x__}` had every
 * worker's variables request fail: its deployments stayed pending, the runtime retried for
 * ever. The contract's context keys (`^[A-Za-z_][A-Za-z0-9_-]{0,127}$`) include such names,
 * and they work; variable names like them are refused up front, with the reason.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

it('keeps a context key shaped like a Firestore reserved name', async () => {
  const set = await t.request(
    '/api/contexts/update-global',
    jsonInit('POST', { __x__: 'kept', __name__: 1 }, admin),
  );
  expect(set.status, await set.clone().text()).toBe(200);
  const got = await json(await t.request('/api/contexts/global', { headers: admin }));
  expect(got).toMatchObject({ __x__: 'kept', __name__: 1 });
});

it('refuses a variable named like a Firestore reserved name, and a job referencing one', async () => {
  const put = await t.request('/api/variables/__x__', jsonInit('PUT', { value: 'v' }, admin));
  expect(put.status, await put.clone().text()).toBe(400);
  expect((await json(put)).error.message).toMatch(/not __…__/);
  expect((await t.request('/api/variables/__x__', { headers: admin })).status).toBe(400);
  const job = await t.request('/api/jobs/dyn-reserved', {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: "name: dyn-reserved\ninput:\n  http-poll:\n    url: 'http://127.0.0.1:9/a?v=${dyn|__x__||fb}'\noutput:\n  print: {}\n",
  });
  expect(job.status, await job.clone().text()).toBe(400);
  expect((await t.request('/api/jobs/dyn-reserved', { headers: admin })).status).toBe(404);
});
