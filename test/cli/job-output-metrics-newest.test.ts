/**
 * The output metrics of `sluice job ls` / `job get` ("last 24 h") on a busy tenant: when the
 * reports are too many to read within the page budget, the newest are the ones counted
 * and the figure says it is partial (from when it counts). Against an in-memory log that
 * answers as GET /api/events does (ids by time, `since`, `cursor`, oldest first or
 * `order=newest`), and against the real API with small pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.ts';
import { metricsCell, recentOutputMetrics } from '../../cli/commands/job-output-metrics.ts';
import { buildEvent, eventsCollection, storedEvent } from '../../functions/events/event-log.ts';
import type { EventView } from '../../shared/api/events.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';

const HOUR = 3_600_000;
const idTime = (ms: number) => new Date(ms).toISOString().replace(/[-:.TZ]/g, '');

function report(ms: number, i: number, job = 'j'): EventView {
  return {
    id: `${idTime(ms)}-${String(i).padStart(12, '0')}`,
    type: 'job-metrics',
    kind: 'system',
    source: 'job',
    job,
    worker: 'w',
    time: new Date(ms).toISOString(),
    payload: { output: 'print', events: 1, bytes: 0, batches: 1, retries: 0, failures: 0 },
  };
}

/** GET /api/events over `log` as functions/events/routes.ts answers, counting the requests. */
function fakeApi(log: EventView[]) {
  const sorted = [...log].sort((a, b) => (a.id < b.id ? -1 : 1));
  const api = {
    requests: 0,
    get: async (_path: string, o: { query: Record<string, string | undefined> }) => {
      api.requests++;
      const q = o.query;
      const after = q.cursor ? Buffer.from(q.cursor, 'base64url').toString() : undefined;
      const since = q.since ? idTime(Date.parse(q.since)) : undefined;
      const limit = Number(q.limit ?? 100);
      const newest = q.order === 'newest';
      const rows = (newest ? [...sorted].reverse() : sorted).filter(
        (e) =>
          (!q.type || e.type === q.type) &&
          (!q.job || e.job === q.job) &&
          (after === undefined || (newest ? e.id < after : e.id > after)) &&
          (since === undefined || e.id >= since),
      );
      const page = rows.slice(0, limit);
      const next = rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null;
      return { events: page, next_cursor: next };
    },
  };
  return api;
}

/** The result as a map, whichever shape recentOutputMetrics answers in. */
// biome-ignore lint/suspicious/noExplicitAny: tolerant of the shape before the fix, to fail on the figures.
const byJobOf = (r: any) =>
  ('byJob' in r ? r.byJob : r) as Awaited<ReturnType<typeof recentOutputMetrics>>['byJob'];

describe('with more reports than the budget reads (12,000 in the last 24 h)', () => {
  const now = Date.now();
  // One report every 6 s from 23 h ago: the newest is 3 h old.
  const log = Array.from({ length: 12_000 }, (_, i) => report(now - 23 * HOUR + i * 6000, i));
  log.push(report(now - 60_000, 99_999_999, 'recent'));

  it('counts the newest reports, says from when, and marks the figure partial', async () => {
    const api = fakeApi(log);
    const got = await recentOutputMetrics(api as unknown as ApiClient, {}, now);
    const byJob = byJobOf(got);
    // The report of a minute ago is counted (the oldest-first read stopped before it).
    expect(byJob.get('recent')?.get('print')?.events).toBe(1);
    expect(got).toMatchObject({ complete: false });
    const since = Date.parse((got as { since: string }).since);
    expect(since).toBeGreaterThan(now - 24 * HOUR);
    // Exactly the reports from `since` on, none older.
    const expected = log.filter((e) => e.job === 'j' && Date.parse(e.time) >= since).length;
    expect(byJob.get('j')?.get('print')?.events).toBe(expected);
    expect(expected).toBeGreaterThanOrEqual(7000);
    expect(api.requests).toBeLessThanOrEqual(12);
    expect(metricsCell(byJob.get('j')?.get('print'), true)).toMatch(/^≥\d+ events, /);
  });

  it('counts all of them, in one request, when one page holds the day', async () => {
    const few = log.slice(0, 500);
    const api = fakeApi(few);
    const got = await recentOutputMetrics(api as unknown as ApiClient, {}, now);
    expect(byJobOf(got).get('j')?.get('print')?.events).toBe(500);
    expect(got).toMatchObject({ complete: true });
    expect(api.requests).toBe(1);
  });

  it('counts all of them exactly when they fit in the budget', async () => {
    for (const count of [1500, 4000, 7000]) {
      const some = log.filter((e) => e.job === 'j').slice(-count);
      const got = await recentOutputMetrics(fakeApi(some) as unknown as ApiClient, {}, now);
      expect(byJobOf(got).get('j')?.get('print')?.events, String(count)).toBe(count);
      expect(got).toMatchObject({ complete: true });
    }
  });

  it('keeps the newest when the rate changes (a quiet night, then a burst)', async () => {
    const quiet = Array.from({ length: 1200 }, (_, i) => report(now - 23 * HOUR + i * 50_000, i));
    const burst = Array.from({ length: 30_000 }, (_, i) => report(now - 2 * HOUR + i * 200, 10_000 + i));
    const got = await recentOutputMetrics(fakeApi([...quiet, ...burst]) as unknown as ApiClient, {}, now);
    const since = Date.parse((got as { since: string }).since);
    const expected = [...quiet, ...burst].filter((e) => Date.parse(e.time) >= since).length;
    expect(expected).toBeGreaterThan(0);
    expect(byJobOf(got).get('j')?.get('print')?.events).toBe(expected);
    expect(got).toMatchObject({ complete: false });
  });
});

describe('against the API (pages of 10, at most 4)', () => {
  let t: TestApp;
  let server: { url: string; close(): Promise<void> };
  let api: ApiClient;
  const now = Date.now();

  beforeAll(async () => {
    t = await testApp();
    const token = await bootstrapTestAdmin(t);
    server = await serveTestApp(t);
    api = new ApiClient({ server: server.url, token });
    const db = await t.deps.clients.firestore();
    const batch = db.batch();
    // 60 reports, one every 20 minutes, the newest 2 minutes ago.
    for (let i = 0; i < 60; i++) {
      const made = new Date(now - 2 * 60_000 - (59 - i) * 20 * 60_000);
      const e = {
        ...buildEvent(
          {
            type: 'job-metrics',
            source: 'job',
            worker: 'w',
            job: 'copy',
            payload: { output: 'gcs', events: 1, batches: 1, bytes: 0, retries: 0, failures: 0 },
          },
          made,
        ),
        id: `${idTime(made.getTime())}-${String(i).padStart(12, '0')}`,
      };
      batch.set(eventsCollection(db, 'default').doc(e.id), storedEvent(e));
    }
    await batch.commit();
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('keeps the newest reports and marks the figure partial', async () => {
    const got = await recentOutputMetrics(api, { job: 'copy' }, now, { pages: 4, pageSize: 10 });
    const sum = byJobOf(got).get('copy')?.get('gcs');
    expect(sum?.last_report).toBe(new Date(now - 2 * 60_000).toISOString());
    expect(got).toMatchObject({ complete: false });
    const since = Date.parse((got as { since: string }).since);
    const expected = Array.from({ length: 60 }, (_, i) => now - 2 * 60_000 - (59 - i) * 20 * 60_000).filter(
      (ms) => ms >= since,
    ).length;
    expect(sum?.events).toBe(expected);
    expect(expected).toBeGreaterThanOrEqual(10);
  });

  it('counts all 60 when the budget allows', async () => {
    const got = await recentOutputMetrics(api, { job: 'copy' }, now, { pages: 12, pageSize: 10 });
    expect(byJobOf(got).get('copy')?.get('gcs')?.events).toBe(60);
    expect(got).toMatchObject({ complete: true });
  });
});
