/**
 * Issue 16, item 16 (identity): names every JavaScript object answers to. Firestore's
 * `data()` gives plain objects, so `user.memberships['constructor']` was truthy for every
 * user. Each lookup by an outside name in users, tenants, tokens, sessions and API keys is
 * walked here with such names, as tenant, username, path parameter and token claim.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authServices } from '../../functions/auth/services.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, userToken } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { createUser, loginStatus, storedUser } from './identity-helpers.ts';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const KIM_PASSWORD = 'kim-real-password';

let t: TestApp;
let systemAdmin: string;
beforeAll(async () => {
  t = await testApp();
  systemAdmin = await bootstrapTestAdmin(t);
  await createUser(t, systemAdmin, { username: 'kim', password: KIM_PASSWORD, role: 'viewer' });
});
afterAll(() => t.close());

async function usernames(): Promise<string[]> {
  const db = await t.deps.clients.firestore();
  return (await db.collection('users').listDocuments()).map((d) => d.id).sort();
}

async function tenants(): Promise<string[]> {
  const db = await t.deps.clients.firestore();
  return (await db.collection('tenants').listDocuments()).map((d) => d.id).sort();
}

function refused(status: number) {
  expect([400, 401, 403, 404]).toContain(status);
}

describe('names that are properties of every object', () => {
  it('are refused as tenants, usernames and path parameters, and change nothing', async () => {
    const [usersBefore, tenantsBefore, kimBefore] = [
      await usernames(),
      await tenants(),
      await storedUser(t, 'kim'),
    ];
    for (const name of NAMES) {
      const tenant = await t.request('/api/tenants', jsonInit('POST', { name }, bearer(systemAdmin)));
      expect(tenant.status, `tenant ${name}`).toBe(400);

      const user = await t.request(
        '/api/users',
        jsonInit(
          'POST',
          { username: name, password: 'prototype-password', role: 'admin' },
          bearer(systemAdmin),
        ),
      );
      expect(user.status, `user ${name}`).toBe(400);
      expect((await json(user)).error.code).toBe('invalid_request');

      const join = await t.request(
        '/api/users',
        jsonInit('POST', { username: 'kim', role: 'admin', tenant: name }, bearer(systemAdmin)),
      );
      refused(join.status);

      const path = encodeURIComponent(name);
      refused(
        (await t.request(`/api/users/${path}`, { method: 'DELETE', headers: bearer(systemAdmin) })).status,
      );
      refused(
        (
          await t.request(
            `/api/users/${path}/password`,
            jsonInit('POST', { password: 'prototype-password' }, bearer(systemAdmin)),
          )
        ).status,
      );

      for (const route of ['/api/tokens/create/user', '/api/auth/login']) {
        const login = await t.request(
          route,
          jsonInit('POST', { username: 'kim', password: KIM_PASSWORD, tenant: name }),
        );
        expect([400, 403], `${route} in tenant ${name}`).toContain(login.status);
      }

      const key = await t.request(
        '/api/api-keys',
        jsonInit('POST', { name, role: 'viewer' }, bearer(systemAdmin)),
      );
      expect(key.status, `api key named ${name}`).toBe(400);
      refused(
        (await t.request(`/api/api-keys/${path}`, { method: 'DELETE', headers: bearer(systemAdmin) })).status,
      );
    }
    const keys = await json(await t.request('/api/api-keys', { headers: bearer(systemAdmin) }));
    expect(keys).toEqual([]);
    expect(await usernames()).toEqual(usersBefore);
    expect(await tenants()).toEqual(tenantsBefore);
    expect(await storedUser(t, 'kim')).toEqual(kimBefore);
  });

  it('are refused as the tenant claim of a token, even where old data has such a tenant', async () => {
    // Data from before tenant names were checked: a tenant `constructor` and its admin.
    const db = await t.deps.clients.firestore();
    await createUser(t, systemAdmin, { username: 'mallory', password: 'mallory-password', role: 'viewer' });
    await db
      .collection('tenants')
      .doc('constructor')
      .set({ name: 'constructor', created_at: new Date().toISOString() });
    const mallory = (await storedUser(t, 'mallory'))!;
    await db
      .collection('users')
      .doc('mallory')
      .set({ ...mallory, memberships: { ...mallory.memberships, constructor: 'admin' } });
    expect(Object.hasOwn((await storedUser(t, 'mallory'))!.memberships, 'constructor')).toBe(true);
    const genuine = decodeJwt(await userToken(t, 'mallory', 'mallory-password'));
    const kimBefore = await storedUser(t, 'kim');
    for (const tenant of NAMES) {
      const { token } = await authServices(t.deps).issue(
        { sub: 'mallory', kind: 'user', tenant, roles: ['admin'], cred: genuine.cred as string },
        60_000,
      );
      const reset = await t.request(
        '/api/users/kim/password',
        jsonInit('POST', { password: 'taken-over-password' }, bearer(token)),
      );
      expect([401, 403], `token in tenant ${tenant}`).toContain(reset.status);
      expect((await t.request('/api/auth/me', { headers: bearer(token) })).status, tenant).toBe(401);
    }
    expect(await storedUser(t, 'kim')).toEqual(kimBefore);
    expect(await loginStatus(t, 'kim', KIM_PASSWORD)).toBe(201);
  });

  it('are refused as usernames at login', async () => {
    // An app of its own: these failed logins count against the test client's address.
    const own = await testApp();
    try {
      await bootstrapTestAdmin(own);
      for (const name of NAMES) {
        for (const route of ['/api/tokens/create/user', '/api/auth/login']) {
          const res = await own.request(route, jsonInit('POST', { username: name, password: KIM_PASSWORD }));
          expect([400, 401], `${route} as ${name}`).toContain(res.status);
          expect(res.headers.get('set-cookie')).toBeNull();
        }
      }
    } finally {
      await own.close();
    }
  });
});
