/**
 * Issue 16, item 1: a tenant admin must not take over users of other tenants (least of
 * all the system admin), by pulling them into its tenant and resetting their password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bearer, bootstrapTestAdmin, userToken } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { createTenant, createUser, loginStatus, storedUser } from './identity-helpers.ts';

const PW = {
  boss: 'acme-boss-password-1',
  bob: 'bob-of-other-password',
  carol: 'carol-in-both-password',
};

let t: TestApp;
let systemAdmin: string;
let acmeAdmin: string;
beforeAll(async () => {
  t = await testApp();
  systemAdmin = await bootstrapTestAdmin(t);
  await createTenant(t, systemAdmin, 'acme');
  await createTenant(t, systemAdmin, 'other');
  await createUser(t, systemAdmin, { username: 'boss', password: PW.boss, role: 'admin', tenant: 'acme' });
  await createUser(t, systemAdmin, { username: 'bob', password: PW.bob, role: 'admin', tenant: 'other' });
  await createUser(t, systemAdmin, { username: 'carol', password: PW.carol, role: 'viewer', tenant: 'acme' });
  await createUser(t, systemAdmin, { username: 'carol', role: 'admin', tenant: 'other' });
  acmeAdmin = await userToken(t, 'boss', PW.boss, { tenant: 'acme' });
});
afterAll(() => t.close());

const addToAcme = (username: string, extra: Record<string, unknown> = {}) =>
  t.request('/api/users', jsonInit('POST', { username, role: 'viewer', ...extra }, bearer(acmeAdmin)));
const resetByAcme = (username: string, password: string) =>
  t.request(`/api/users/${username}/password`, jsonInit('POST', { password }, bearer(acmeAdmin)));

describe('a tenant admin cannot take over users of other tenants', () => {
  it('refuses to pull the system admin into its tenant or reset its password', async () => {
    const before = await storedUser(t, 'admin');
    const joined = await addToAcme('admin');
    expect(joined.status).toBe(403);
    expect((await json(joined)).error.code).toBe('forbidden');
    const reset = await resetByAcme('admin', 'taken-over-password');
    expect(reset.status).toBe(403);
    expect((await json(reset)).error.code).toBe('forbidden');
    expect(await storedUser(t, 'admin')).toEqual(before);
    expect(await loginStatus(t, 'admin', 'taken-over-password')).toBe(401);
    expect(await loginStatus(t, 'admin', ADMIN_PASSWORD)).toBe(201);
  });

  it('refuses to add a user of another tenant or reset its password', async () => {
    const before = await storedUser(t, 'bob');
    expect((await addToAcme('bob')).status).toBe(403);
    expect((await resetByAcme('bob', 'taken-over-password')).status).toBe(403);
    expect(await storedUser(t, 'bob')).toEqual(before);
    expect(await loginStatus(t, 'bob', PW.bob, 'other')).toBe(201);
  });

  it('refuses to reset the password of its own member who also belongs to another tenant', async () => {
    const before = await storedUser(t, 'carol');
    const reset = await resetByAcme('carol', 'taken-over-password');
    expect(reset.status).toBe(403);
    expect(await storedUser(t, 'carol')).toEqual(before);
    expect(await loginStatus(t, 'carol', PW.carol, 'other')).toBe(201);
  });

  it('refuses to remove the system admin from its tenant', async () => {
    await createUser(t, systemAdmin, { username: 'admin', role: 'admin', tenant: 'acme' });
    const before = await storedUser(t, 'admin');
    const removed = await t.request('/api/users/admin', { method: 'DELETE', headers: bearer(acmeAdmin) });
    expect(removed.status).toBe(403);
    expect(await storedUser(t, 'admin')).toEqual(before);
    expect(before?.memberships).toMatchObject({ acme: 'admin' });
  });

  it('answers "add user" the same whether the username exists elsewhere or not', async () => {
    const existing = await addToAcme('bob');
    const missing = await addToAcme('nobody-at-all');
    expect(missing.status).toBe(existing.status);
    const [a, b] = [(await json(existing)).error, (await json(missing)).error];
    expect(a.code).toBe(b.code);
    expect(a.message.replace('bob', 'X')).toBe(b.message.replace('nobody-at-all', 'X'));
    expect(await storedUser(t, 'nobody-at-all')).toBeUndefined();

    const taken = await addToAcme('bob', { password: 'a-fresh-password-1' });
    expect(taken.status).toBe(409);
    const message = (await json(taken)).error.message as string;
    expect(message).not.toMatch(/other|exists|omit/);
    expect(await storedUser(t, 'bob')).toMatchObject({ memberships: { other: 'admin' } });
  });

  it('still lets a tenant admin manage users of its own tenant', async () => {
    await createUser(t, acmeAdmin, { username: 'dave', password: 'dave-first-password', role: 'viewer' });
    expect((await resetByAcme('dave', 'dave-second-password')).status).toBe(204);
    expect(await loginStatus(t, 'dave', 'dave-second-password', 'acme')).toBe(201);
    const removed = await t.request('/api/users/dave', { method: 'DELETE', headers: bearer(acmeAdmin) });
    expect(removed.status).toBe(204);
    expect(await storedUser(t, 'dave')).toBeUndefined();
  });

  it('lets the system admin add an existing user to another tenant and reset any password', async () => {
    const added = await t.request(
      '/api/users',
      jsonInit('POST', { username: 'bob', role: 'viewer', tenant: 'acme' }, bearer(systemAdmin)),
    );
    expect(added.status).toBe(201);
    const reset = await t.request(
      '/api/users/bob/password',
      jsonInit('POST', { password: 'bob-reset-by-system' }, bearer(systemAdmin)),
    );
    expect(reset.status).toBe(204);
    expect(await loginStatus(t, 'bob', 'bob-reset-by-system', 'acme')).toBe(201);
  });
});
