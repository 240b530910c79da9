/**
 * `GET /api/events?order=newest` (a Sluice extension): newest first, each cursor going
 * further back, down to `since`, with the same filters as the contract's oldest-first
 * order; anything else in `order` is refused with the contract's error body.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildEvent, eventsCollection, storedEvent } from '../../functions/events/event-log.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
/** Ten minutes apart, oldest first: 7 of job `a` (the even ones from worker w1), 3 of job `b`. */
const times = Array.from({ length: 10 }, (_, i) => new Date(Date.UTC(2026, 10, 20, 12, 10 * i)));
const ids: string[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  for (const [i, at] of times.entries()) {
    const event = buildEvent(
      {
        type: i % 3 === 2 ? 'job-errors' : 'job-metrics',
        source: 'job',
        worker: i % 2 === 0 ? 'w1' : 'w2',
        job: i < 7 ? 'a' : 'b',
        payload: { i },
      },
      at,
    );
    ids.push(event.id);
    await eventsCollection(db, 'default').doc(event.id).set(storedEvent(event));
  }
});
afterAll(() => t.close());

/** Every page of a query, following next_cursor: the payloads' `i` of each page. */
async function pages(query: string): Promise<number[][]> {
  const out: number[][] = [];
  let cursor: string | null = null;
  do {
    const res = await t.request(`/api/events?${query}${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: admin,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const page = await json(res);
    out.push(page.events.map((e: { payload: { i: number } }) => e.payload.i));
    cursor = page.next_cursor;
  } while (cursor && out.length < 20);
  return out;
}

it('pages newest first, each cursor further back', async () => {
  expect(await pages('order=newest&job=a&limit=3')).toEqual([[6, 5, 4], [3, 2, 1], [0]]);
  // The contract's order is unchanged.
  expect(await pages('job=a&limit=3')).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
});

it('stops at since, and combines with the filters', async () => {
  const since = times[2]!.toISOString();
  expect(await pages(`order=newest&job=a&since=${since}&limit=3`)).toEqual([
    [6, 5, 4],
    [3, 2],
  ]);
  expect(await pages('order=newest&worker=w1&limit=10')).toEqual([[8, 6, 4, 2, 0]]);
  expect(await pages('order=newest&type=job-errors&limit=2')).toEqual([[8, 5], [2]]);
  expect(await pages('order=newest&type=job-metrics&job=b&worker=w2&limit=5')).toEqual([[9, 7]]);
  // A since later than everything: nothing, and no cursor.
  expect(await pages(`order=newest&since=${new Date(Date.UTC(2027, 0, 1)).toISOString()}`)).toEqual([[]]);
});

it('refuses an order it does not know, saying which values it takes', async () => {
  const res = await t.request('/api/events?order=sideways', { headers: admin });
  expect(res.status).toBe(400);
  const body = await json(res);
  expect(body.error.code).toBe('invalid_request');
  expect(JSON.stringify(body.error)).toMatch(/oldest.*newest|newest.*oldest/);
});
