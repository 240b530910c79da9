/**
 * Inputs of the key and secret routes that used to answer 500 or reach another document:
 * an `expires_in` so long that its date does not exist (`new Date(...).toISOString()`
 * threw), and an enrollment secret id with a slash (a nested Firestore path) or an
 * inherited name. Each is now a 400 that says what was wrong, and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const listed = async (path: string) =>
  ((await json(await t.request(path, { headers: admin }))) as unknown[]).length;
/** What each route needs besides `expires_in`. */
const BODIES: Record<string, Record<string, unknown>> = {
  '/api/api-keys': { name: 'k', role: 'viewer' },
  '/api/enrollment-secrets': { name: 'k' },
};

describe('credential lifetimes', () => {
  for (const [path, fields] of Object.entries(BODIES))
    it(`${path}: an expires_in past 10 years or not a duration is a 400, and nothing is made`, async () => {
      const before = await listed(path);
      for (const expires_in of ['100000000d', '3651d', '0s', 'soon']) {
        const res = await t.request(path, jsonInit('POST', { ...fields, expires_in }, admin));
        expect(res.status, expires_in).toBe(400);
        const { error } = await json(res);
        expect(error.details, expires_in).toContainEqual({ path: 'expires_in', message: expect.any(String) });
      }
      expect(await listed(path)).toBe(before);
      const ok = await t.request(path, jsonInit('POST', { ...fields, expires_in: '3650d' }, admin));
      expect(ok.status).toBe(201);
    });
});

describe('enrollment secret ids', () => {
  it('are names: a slash or an inherited name is a 400', async () => {
    for (const id of ['a%2Fb', 'a%2Fb%2Fc', '__proto__', 'constructor']) {
      const res = await t.request(`/api/enrollment-secrets/${id}`, { method: 'DELETE', headers: admin });
      expect(res.status, id).toBe(400);
    }
  });
});
