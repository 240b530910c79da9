/**
 * A token stands only while every claim it makes holds: its credential is checked against the
 * store and the answer cached for a few seconds, keyed by every claim the check reads. A
 * token for the same credential, tenant and role that claims more (system admin, another
 * subject or kind) was let in on the cached answer of the genuine one. (Forging one needs
 * the signing key: this is depth, behind the key.)
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authServices } from '../../functions/auth/services.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor, userToken } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { createUser } from './identity-helpers.ts';

let t: TestApp;
let adminToken: string;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  adminToken = await bootstrapTestAdmin(t);
  admin = bearer(adminToken);
});
afterAll(() => t.close());

/** `claims` signed with the app's own key, as a holder of that key could. */
async function signed(claims: Record<string, unknown>): Promise<string> {
  const { token } = await authServices(t.deps).issue(claims as never, 60_000);
  return token;
}

describe('claims beyond what the credential grants', () => {
  it('are refused even right after the genuine token was accepted', async () => {
    await createUser(t, adminToken, { username: 'alice', password: 'alice-password-123', role: 'admin' });
    const genuine = await userToken(t, 'alice', 'alice-password-123');
    expect((await t.request('/api/auth/me', { headers: bearer(genuine) })).status).toBe(200);
    const claims = decodeJwt(genuine);
    const base = {
      sub: 'alice',
      kind: 'user',
      tenant: claims.tenant,
      roles: claims.roles,
      cred: claims.cred,
    };
    for (const forged of [
      { ...base, sys: true },
      { ...base, sub: 'admin' },
      { ...base, kind: 'api-key' },
    ]) {
      const status = (await t.request('/api/auth/me', { headers: bearer(await signed(forged)) })).status;
      expect(status, JSON.stringify(forged)).toBe(401);
    }
  });

  it('an api key or worker credential carries only its own subject, kind and role', async () => {
    const created = await json(
      await t.request('/api/api-keys', jsonInit('POST', { name: 'ci', role: 'viewer' }, admin)),
    );
    const keyClaims = decodeJwt(await apiKeyToken(t, created.key));
    const workerClaims = decodeJwt(await tokenFor(t, { role: 'worker' }));
    const forgeries = [
      { ...keyClaims, sub: 'someone-else' },
      { ...keyClaims, kind: 'user' },
      { ...workerClaims, kind: 'user' },
      { ...workerClaims, roles: ['admin'] },
    ];
    for (const forged of forgeries) {
      const { iat: _i, nbf: _n, exp: _e, jti: _j, iss: _is, aud: _a, ...claims } = forged;
      const status = (await t.request('/api/auth/me', { headers: bearer(await signed(claims)) })).status;
      expect(status, JSON.stringify(claims)).toBe(401);
    }
  });
});
