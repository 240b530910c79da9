/**
 * The failed-login limit holds for attempts sent at once. It used to check the count, then
 * the password (scrypt, about 150 ms), and only then record the failure: 50 wrong passwords
 * sent together were all checked, where 10 a minute may be, and a caller could try about
 * 25 passwords a second. An attempt now counts from when it begins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FAILURES_PER_MINUTE } from '../../functions/auth/rate-limit.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { jsonInit } from '../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('wrong passwords sent at once', () => {
  it('are checked at most 10 times a minute; the rest are refused with 429', async () => {
    const admin = bearer(await bootstrapTestAdmin(t));
    const created = await t.request(
      '/api/users',
      jsonInit('POST', { username: 'victim', password: 'the-real-password-123', role: 'viewer' }, admin),
    );
    expect(created.status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.request(
          '/api/tokens/create/user',
          jsonInit('POST', { username: 'victim', password: `guess-${i}-xxxxxxx` }),
        ),
      ),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // One at a time after the burst, until refused: 10 checked passwords in all.
    for (let i = 0, last = 0; i < 2 * MAX_FAILURES_PER_MINUTE && last !== 429; i++) {
      const res = await t.request(
        '/api/tokens/create/user',
        jsonInit('POST', { username: 'victim', password: `later-${i}-xxxxxxx` }),
      );
      last = res.status;
      statuses.push(last);
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_FAILURES_PER_MINUTE);
    // Even the right password waits now.
    const right = await t.request(
      '/api/tokens/create/user',
      jsonInit('POST', { username: 'victim', password: 'the-real-password-123' }),
    );
    expect(right.status).toBe(429);
  }, 60_000);
});
