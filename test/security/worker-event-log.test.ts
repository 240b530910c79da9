/**
 * Issue 16, item 20: the event log leaked data and grew without bound. `job-errors`
 * samples held 200 characters of object or response content, readable by viewers; events
 * had no TTL; a worker could post 500 events a request without a quota. Content fields of
 * telemetry are now shown to operators only, every event carries `expires_at` (a TTL
 * policy in the cloud, a bounded sweep in the local stack), and worker telemetry has a
 * per-worker token bucket (429 with Retry-After, nothing of the batch written).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsCollection } from '../../functions/events/event-log.ts';
import { PERIODIC_TASKS } from '../../functions/scheduled/tasks.ts';
import { TELEMETRY_BURST } from '../../functions/worker-api/telemetry-quota.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { apiWorker, deployJob, events, type Headers } from './worker-helpers.ts';

const CARD = '4111-1111-1111-1111';
const SSN = '078-05-1120';
let t: TestApp;
let admin: Headers;
let viewer: Headers;
let operator: Headers;
let worker: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  viewer = bearer(await tokenFor(t, { role: 'viewer' }));
  operator = bearer(await tokenFor(t, { role: 'operator' }));
  worker = await apiWorker(t, admin, 'chatty');
  await deployJob(t, admin, 'leaky', ['chatty']);
});
afterAll(() => t.close());

const post = (headers: Headers, batch: unknown[]) =>
  t.request('/api/worker/events', jsonInit('POST', { events: batch }, headers));

describe('job-errors content', () => {
  it('is shown to operators, and withheld from viewers', async () => {
    const res = await post(worker, [
      {
        type: 'job-errors',
        job: 'leaky',
        payload: {
          reason: 'invalid-json',
          object: 'gs://b/customers.json',
          sample: `{"name":"Ann","card":"${CARD}"`,
          message: `https://api.example/x answered 400: {"ssn":"${SSN}"}`,
        },
      },
    ]);
    expect(res.status).toBe(202);
    const asViewer = await t.request('/api/events?type=job-errors&job=leaky', { headers: viewer });
    expect(asViewer.status).toBe(200);
    const text = await asViewer.text();
    expect(text).not.toContain(CARD);
    expect(text).not.toContain(SSN);
    const [seen] = JSON.parse(text).events;
    expect(seen.payload).toMatchObject({ reason: 'invalid-json', object: 'gs://b/customers.json' });
    const asOperator = await t.request('/api/events?type=job-errors&job=leaky', { headers: operator });
    expect(await asOperator.text()).toContain(CARD);
  });
});

describe('event retention', () => {
  it('gives every event an expiry, and the local sweep deletes expired ones', async () => {
    const db = await t.deps.clients.firestore();
    const fresh = await events(t, admin, 'type=job-deployed&job=leaky');
    expect(fresh).toHaveLength(1);
    const stored = await eventsCollection(db, 'default').where('type', '==', 'job-deployed').get();
    const expires = stored.docs[0]!.get('expires_at') as { toMillis(): number };
    expect(expires.toMillis()).toBeGreaterThan(Date.now() + 24 * 3600_000);
    expect(fresh[0]).not.toHaveProperty('expires_at');

    const old = eventsCollection(db, 'default').doc('20000101000000000-old');
    await old.set({
      id: old.id,
      type: 'job-metrics',
      kind: 'system',
      source: 'job',
      time: '2000-01-01T00:00:00.000Z',
      payload: {},
      expires_at: new Date(Date.now() - 1000),
    });
    const sweep = PERIODIC_TASKS.find((task) => task.name === 'expire documents');
    expect(sweep).toBeDefined();
    await sweep!.run(t.deps);
    expect((await old.get()).exists).toBe(false);
    expect(await events(t, admin, 'type=job-deployed&job=leaky')).toHaveLength(1);
  });
});

describe('telemetry quota', () => {
  it('answers 429 with Retry-After once a worker spent its burst, and writes nothing of that batch', async () => {
    const batch = (marker: string) =>
      Array.from({ length: 500 }, (_, i) => ({ type: 'job-metrics', job: 'leaky', payload: { marker, i } }));
    let sent = 0;
    while (sent + 500 <= TELEMETRY_BURST) {
      expect((await post(worker, batch(`ok-${sent}`))).status).toBe(202);
      sent += 500;
    }
    const res = await post(worker, batch('over'));
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await json(res)).error.code).toBe('rate_limited');
    const db = await t.deps.clients.firestore();
    const written = await eventsCollection(db, 'default').where('payload.marker', '==', 'over').get();
    expect(written.size).toBe(0);

    // Another worker has a bucket of its own.
    const quiet = await apiWorker(t, admin, 'quiet');
    await deployJob(t, admin, 'calm', ['quiet']);
    expect((await post(quiet, [{ type: 'job-metrics', job: 'calm', payload: {} }])).status).toBe(202);
  }, 60_000);
});
