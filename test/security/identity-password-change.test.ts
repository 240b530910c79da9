/**
 * Issue 16, item 2: a stolen token or session must not be enough to change its owner's
 * password (and so lock the owner out for good): changing one's own password needs the
 * current one, and wrong guesses count as failed logins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FAILURES_PER_MINUTE } from '../../functions/auth/rate-limit.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, userToken } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { createUser, loginStatus, storedUser } from './identity-helpers.ts';

let t: TestApp;
let systemAdmin: string;
beforeAll(async () => {
  t = await testApp();
  systemAdmin = await bootstrapTestAdmin(t);
});
afterAll(() => t.close());

const change = (token: string, username: string, body: Record<string, unknown>) =>
  t.request(`/api/users/${username}/password`, jsonInit('POST', body, bearer(token)));

describe('changing one’s own password', () => {
  it('needs the current password: without it or with a wrong one, 403 and nothing changes', async () => {
    await createUser(t, systemAdmin, { username: 'erin', password: 'erin-old-password', role: 'viewer' });
    const stolen = await userToken(t, 'erin', 'erin-old-password');
    const before = await storedUser(t, 'erin');

    const bare = await change(stolen, 'erin', { password: 'attacker-password-1' });
    expect(bare.status).toBe(403);
    expect((await json(bare)).error.code).toBe('forbidden');
    const wrong = await change(stolen, 'erin', {
      password: 'attacker-password-1',
      current_password: 'a-wrong-guess-123',
    });
    expect(wrong.status).toBe(403);
    expect(await storedUser(t, 'erin')).toEqual(before);
    expect(await loginStatus(t, 'erin', 'attacker-password-1')).toBe(401);

    const right = await change(stolen, 'erin', {
      password: 'erin-new-password',
      current_password: 'erin-old-password',
    });
    expect(right.status).toBe(204);
    expect(await loginStatus(t, 'erin', 'erin-new-password')).toBe(201);
  });

  it('lets an admin reset a member’s password without the member’s current password', async () => {
    await createUser(t, systemAdmin, { username: 'fay', password: 'fay-old-password', role: 'viewer' });
    expect((await change(systemAdmin, 'fay', { password: 'fay-reset-password' })).status).toBe(204);
    expect(await loginStatus(t, 'fay', 'fay-reset-password')).toBe(201);
  });
});

describe('wrong current passwords', () => {
  it('count as failed logins: after 10, the user is rate limited', async () => {
    // An app (and database) of its own: the failures also count against the test client's address.
    const own = await testApp();
    try {
      const admin = await bootstrapTestAdmin(own);
      const res = await own.request(
        '/api/users',
        jsonInit('POST', { username: 'gus', password: 'gus-real-password', role: 'viewer' }, bearer(admin)),
      );
      expect(res.status).toBe(201);
      const stolen = await userToken(own, 'gus', 'gus-real-password');
      for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) {
        const guess = await own.request(
          '/api/users/gus/password',
          jsonInit(
            'POST',
            { password: 'attacker-password-1', current_password: `guess-number-${i}` },
            bearer(stolen),
          ),
        );
        expect(guess.status).toBe(403);
      }
      const limited = await own.request(
        '/api/users/gus/password',
        jsonInit(
          'POST',
          { password: 'attacker-password-1', current_password: 'gus-real-password' },
          bearer(stolen),
        ),
      );
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      const login = await own.request(
        '/api/tokens/create/user',
        jsonInit('POST', { username: 'gus', password: 'gus-real-password' }),
      );
      expect(login.status).toBe(429);
    } finally {
      await own.close();
    }
    // Twelve password checks (scrypt) and an app of its own: beyond the default timeout on a
    // busy machine.
  }, 60_000);
});
