/**
 * Review finding A: the lists sorted in memory and paged with `pageInMemory` must sort in
 * the paging's own order (code point, [scope, name] compared part by part). `SecretStore.list`
 * sorted `scope/name` with localeCompare, so `Zeta/k` (before `alpha` by code point, after it
 * for the locale) was skipped when paging with `limit=1`; the users list had the same mismatch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEXT_PAGE_HEADER } from '../../shared/api/paging.ts';
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

/** Every page of `path` with `limit`, following the tokens. */
async function allPages(path: string, limit: number): Promise<unknown[]> {
  const items: unknown[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const query = new URLSearchParams({ limit: String(limit), ...(token ? { page_token: token } : {}) });
    const res = await t.request(`${path}?${query}`, { headers: admin });
    expect(res.status).toBe(200);
    items.push(...(await json(res)));
    token = res.headers.get(NEXT_PAGE_HEADER);
    pages++;
  } while (token && pages < 50);
  return items;
}

describe('GET /api/secrets paged', () => {
  it('visits every secret once, in code point order of [scope, name], as one unpaged request', async () => {
    // The reviewer's five, and scopes where `scope/name` joined sorts otherwise than the parts.
    const refs = ['Zeta/k', 'alpha/k', 'beta/k', 'edge/db', 'prod/db', 'a-b/y', 'a/x', 'beta/K'];
    for (const ref of refs) {
      const res = await t.request(`/api/secrets/${ref}`, jsonInit('PUT', { value: 'v' }, admin));
      expect(res.status).toBe(204);
    }
    const expected = ['Zeta/k', 'a/x', 'a-b/y', 'alpha/k', 'beta/K', 'beta/k', 'edge/db', 'prod/db'];
    const ref = (s: unknown) => `${(s as { scope: string }).scope}/${(s as { name: string }).name}`;
    const whole = await json(await t.request('/api/secrets', { headers: admin }));
    for (const limit of [1, 2, 3])
      expect((await allPages('/api/secrets', limit)).map(ref)).toEqual(whole.map(ref));
    expect(whole.map(ref)).toEqual(expected);
  });
});

describe('GET /api/users paged', () => {
  it('visits every user once, in code point order of the username', async () => {
    // Code point: - . 1 _ ; the locale puts _ before - and .
    for (const username of ['u_b', 'ub', 'u.b', 'u1', 'u-b']) {
      const res = await t.request(
        '/api/users',
        jsonInit('POST', { username, password: 'a-long-enough-password', role: 'viewer' }, admin),
      );
      expect(res.status).toBe(201);
    }
    const expected = ['admin', 'u-b', 'u.b', 'u1', 'u_b', 'ub'];
    const name = (u: unknown) => (u as { username: string }).username;
    const whole = await json(await t.request('/api/users', { headers: admin }));
    expect((await allPages('/api/users', 1)).map(name)).toEqual(whole.map(name));
    expect(whole.map(name)).toEqual(expected);
  });
});
