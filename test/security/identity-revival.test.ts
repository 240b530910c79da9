/**
 * Issue 16, item 18: deleting a user or worker and creating one of the same name must
 * not bring the old tokens and sessions back to life (credential versions used to
 * restart at 1), and a session must not keep a role its user no longer has.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, userToken } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { createUser, sessionHeaders, startSession } from './identity-helpers.ts';

let t: TestApp;
let systemAdmin: string;
beforeAll(async () => {
  t = await testApp();
  systemAdmin = await bootstrapTestAdmin(t);
});
afterAll(() => t.close());

const me = (headers: Record<string, string>) => t.request('/api/auth/me', { headers });
const deleteUser = async (username: string) => {
  const res = await t.request(`/api/users/${username}`, { method: 'DELETE', headers: bearer(systemAdmin) });
  expect(res.status).toBe(204);
};

describe('a re-created credential does not revive old tokens', () => {
  it('refuses the old token of a deleted and re-created user', async () => {
    await createUser(t, systemAdmin, { username: 'hal', password: 'hal-first-password', role: 'admin' });
    const old = await userToken(t, 'hal', 'hal-first-password');
    expect((await me(bearer(old))).status).toBe(200);
    await deleteUser('hal');
    await createUser(t, systemAdmin, { username: 'hal', password: 'hal-first-password', role: 'admin' });
    const res = await me(bearer(old));
    expect(res.status).toBe(401);
    expect((await json(res)).error.code).toBe('unauthenticated');
    expect((await me(bearer(await userToken(t, 'hal', 'hal-first-password')))).status).toBe(200);
  });

  it('refuses the old token of a deleted and re-created worker', async () => {
    const create = async () => {
      const res = await t.request('/api/workers', jsonInit('POST', { id: 'phoenix' }, bearer(systemAdmin)));
      expect(res.status).toBe(201);
      return (await json(res)).key as string;
    };
    const old = await apiKeyToken(t, await create());
    expect((await me(bearer(old))).status).toBe(200);
    const removed = await t.request('/api/workers/phoenix', {
      method: 'DELETE',
      headers: bearer(systemAdmin),
    });
    expect(removed.status).toBe(204);
    const fresh = await apiKeyToken(t, await create());
    expect((await me(bearer(old))).status).toBe(401);
    expect((await me(bearer(fresh))).status).toBe(200);
  });

  it('takes admin away from the session of a user demoted by re-creation', async () => {
    await createUser(t, systemAdmin, { username: 'ivy', password: 'ivy-first-password', role: 'admin' });
    const session = await startSession(t, 'ivy', 'ivy-first-password');
    expect((await t.request('/api/users', { headers: sessionHeaders(session) })).status).toBe(200);
    await deleteUser('ivy');
    await createUser(t, systemAdmin, { username: 'ivy', password: 'ivy-first-password', role: 'viewer' });
    const res = await t.request('/api/users', { headers: sessionHeaders(session) });
    expect([401, 403]).toContain(res.status);
    const created = await t.request(
      '/api/users',
      jsonInit(
        'POST',
        { username: 'ivy-minion', password: 'minion-password-1', role: 'admin' },
        sessionHeaders(session),
      ),
    );
    expect([401, 403]).toContain(created.status);
    const db = await t.deps.clients.firestore();
    expect((await db.collection('users').doc('ivy-minion').get()).exists, 'the demoted session acted').toBe(
      false,
    );
  });

  it('deletes the sessions of a deleted user', async () => {
    await createUser(t, systemAdmin, { username: 'jo', password: 'jo-first-password', role: 'viewer' });
    await startSession(t, 'jo', 'jo-first-password');
    const db = await t.deps.clients.firestore();
    const sessions = () => db.collection('sessions').where('username', '==', 'jo').get();
    expect((await sessions()).size).toBe(1);
    await deleteUser('jo');
    expect((await sessions()).size).toBe(0);
  });

  it('ends a session at logout', async () => {
    await createUser(t, systemAdmin, { username: 'kai', password: 'kai-first-password', role: 'viewer' });
    const session = await startSession(t, 'kai', 'kai-first-password');
    expect((await me(sessionHeaders(session))).status).toBe(200);
    const out = await t.request('/api/auth/logout', { method: 'POST', headers: sessionHeaders(session) });
    expect(out.status).toBe(204);
    expect((await me(sessionHeaders(session))).status).toBe(401);
  });
});
