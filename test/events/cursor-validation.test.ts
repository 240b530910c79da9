/**
 * Review finding D: `GET /api/events?cursor=garbage!!` answered 200 with an empty page and
 * `next_cursor: null`, and a truncated cursor restarted the paging somewhere else: a client
 * could not tell either from the end of the log. A cursor that is not the position of an
 * event is now a 400 with the contract's error body, telling the client to start again
 * without a cursor. The list endpoints' `page_token` (shared/api/paging.ts) gets the same
 * check. A refused query changes nothing.
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
  for (let i = 0; i < 4; i++) {
    const res = await t.request('/api/messages', jsonInit('POST', { tags: ['cv'], payload: { i } }, admin));
    expect(res.status).toBe(201);
    const worker = await t.request('/api/workers', jsonInit('POST', { id: `cv-${i}` }, admin));
    expect(worker.status).toBe(201);
  }
});
afterAll(() => t.close());

async function get(path: string) {
  const res = await t.request(path, { headers: admin });
  return { status: res.status, body: await json(res), next: res.headers.get(NEXT_PAGE_HEADER) };
}

const everything = async () => (await get('/api/events?limit=1000')).body;

// biome-ignore lint/suspicious/noExplicitAny: the error body as answered.
function expectRefused(res: { status: number; body: any }, what: string, path: string, message: RegExp) {
  expect(res.status, what).toBe(400);
  expect(res.body.error.code, what).toBe('invalid_request');
  expect(res.body.error.message, what).toMatch(message);
  expect(res.body.error.details, what).toEqual([{ path, message: expect.any(String) }]);
}

describe('GET /api/events with a cursor that is not a position', () => {
  it('is a 400 telling the client to start again without cursor, in either order, changing nothing', async () => {
    const before = await everything();
    const first = await get('/api/events?type=user-generated&limit=1');
    expect(first.status).toBe(200);
    const cursor = first.body.next_cursor as string;
    expect(cursor).toBeTruthy();
    const bad = [
      'garbage!!',
      cursor.slice(0, -1),
      cursor.slice(0, -4),
      cursor.slice(0, 8),
      Buffer.from('hello').toString('base64url'),
      Buffer.from('20261123120000123').toString('base64url'),
      `${cursor}AA`,
      `${cursor}!`,
    ];
    for (const order of ['oldest', 'newest']) {
      for (const value of bad) {
        const res = await get(
          `/api/events?type=user-generated&order=${order}&cursor=${encodeURIComponent(value)}`,
        );
        expectRefused(res, `${order} ${value}`, 'cursor', /start again without cursor/);
      }
    }
    expect(await everything()).toEqual(before);
  });

  it('still pages with the cursors it gives, in either order', async () => {
    for (const order of ['oldest', 'newest']) {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(
          `/api/events?type=user-generated&order=${order}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.events.map((e: { payload: { i: number } }) => e.payload.i));
        cursor = page.body.next_cursor;
      } while (cursor && seen.length < 10);
      expect(seen).toEqual(order === 'oldest' ? [0, 1, 2, 3] : [3, 2, 1, 0]);
    }
  });
});

describe('the list endpoints’ page_token (the shared decoding)', () => {
  const LISTS = [
    '/api/jobs',
    '/api/workers',
    '/api/api-keys',
    '/api/users',
    '/api/secrets',
    '/api/variables',
  ];
  it.each(LISTS)('%s: a token that is not a position is a 400, changing nothing', async (path) => {
    const first = await get(`${path}?limit=1`);
    expect(first.status).toBe(200);
    const whole = await get(path);
    const token = first.next ?? 'WyJhIl0';
    for (const value of ['garbage!!', token.slice(0, -2), token.slice(0, 3)]) {
      const res = await get(`${path}?page_token=${encodeURIComponent(value)}`);
      expectRefused(res, `${path} ${value}`, 'page_token', /page_token/);
    }
    expect(await get(path)).toEqual(whole);
  });
});
