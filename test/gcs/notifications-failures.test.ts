/**
 * The `gcs` input with notifications when things go wrong, for real (storage emulator
 * publishing to the Pub/Sub emulator): a read that fails, a listing that fails part-way, an
 * object whose window has not come, an output that fails, a read that outlasts the quiet
 * time, messages that do not vouch for their generation, an ordered delivery that is slow.
 * Each time every object is read once, and no notification is acknowledged before its
 * object is delivered and fingerprinted.
 */
import { randomUUID } from 'node:crypto';
import { PubSub } from '@google-cloud/pubsub';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKFILL_WATERMARK } from '../../functions/runner/inputs/gcs/index.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import { until } from '../helpers/until.ts';
import {
  type GcsTestEnv,
  gcsTestEnv,
  memoryFingerprints,
  memoryWatermarks,
  notifiedFields,
  notifiedSubscription,
} from './helpers.ts';

const PROJECT = 'demo-gcs-notify-failures';
let env: GcsTestEnv;
let pubsub: PubSub;

beforeAll(async () => {
  env = await gcsTestEnv(`failing-${randomUUID().slice(0, 8)}`);
  pubsub = new PubSub({ projectId: PROJECT });
});
afterEach(() => env.emulator.setFaults({}));
afterAll(async () => {
  await pubsub.close();
  await env.stop();
});

/** A notified bucket whose first listing is done: runs read notifications only. */
async function notified(options: { backfilled?: boolean } = {}) {
  const { topic, subscription } = await notifiedSubscription(env, pubsub, PROJECT);
  const fingerprints = memoryFingerprints();
  const watermarks = memoryWatermarks();
  if (options.backfilled ?? true) await watermarks.set('job-a', BACKFILL_WATERMARK, subscription);
  return { topic, subscription, fingerprints, watermarks };
}

const fields = notifiedFields;
const triggered = { trigger: { interval: { duration: '1m' } } };
const lines = (events: RunEvent[]) => events.map((e) => `${e.object}:${e.v}`).sort();

describe('gcs input with notifications, when things go wrong', () => {
  it('an object that failed to read is read by the next run (its notification was not acknowledged)', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    await env.put('failed/x.json', '{"v":1}\n');
    env.emulator.setFaults({ errorRate: 1, errorStatus: 503 });
    const job = fields(subscription, {
      'object-names': ['failed/'],
      retry: { timeout: 30, retries: 0 },
      ...triggered,
    });
    const first = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 1000 });
    expect(first.ended.failed_objects).toBe(1);
    env.emulator.setFaults({});
    const second = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 1000 });
    expect(lines([...first.events, ...second.events])).toEqual(['failed/x.json:1']);
  }, 60_000);

  it('a first listing in which an object failed is listed again by the next run', async () => {
    const { subscription, fingerprints, watermarks } = await notified({ backfilled: false });
    await env.put('backfill/old.json', '{"v":1}\n');
    // Seeded: the listing is answered, the download is not.
    env.emulator.setFaults({ errorRate: 0.5, errorStatus: 503, seed: 1 });
    const job = fields(subscription, {
      'object-names': ['backfill/'],
      retry: { timeout: 30, retries: 0 },
      ...triggered,
    });
    const first = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 500 });
    expect(first.ended).toMatchObject({ list_requests: 1, failed_objects: 1 });
    env.emulator.setFaults({});
    const second = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 500 });
    expect(second.ended.list_requests).toBeGreaterThan(0);
    expect(lines([...first.events, ...second.events])).toEqual(['backfill/old.json:1']);
    const third = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 500 });
    expect(third.ended.list_requests).toBe(0);
  }, 60_000);

  it('an object stamped in a window not complete yet is read by the run of its window', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    const now = Date.now();
    await env.put('windowed/new.json', '{"v":1}\n');
    const job = fields(subscription, {
      'object-names': ['windowed/'],
      'timestamp-mode': 'last-modified',
      trigger: { interval: { duration: '1h', window: { size: '1h' } } },
    });
    const earlier = { start: new Date(now - 3_600_000), end: new Date(now - 1000) };
    const first = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 500, window: earlier });
    expect(first.events).toEqual([]);
    expect(first.ended.skipped).toMatchObject({ 'not-due': 1 });
    const its = { start: new Date(now - 1000), end: new Date(now + 3_600_000) };
    const second = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 500, window: its });
    expect(lines(second.events)).toEqual(['windowed/new.json:1']);
  }, 60_000);

  it('without a trigger, a failed output ends the run and says why', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    await env.put('output/x.json', '{"v":1}\n');
    const stop = new AbortController();
    const running = env.run(fields(subscription, { 'object-names': ['output/'] }), {
      fingerprints,
      watermarks,
      signal: stop.signal,
      deliver: async () => {
        throw new Error('output down');
      },
    });
    const outcome = await Promise.race([
      running.then(
        () => 'ended without the error',
        (err: Error) => err.message,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000)),
    ]);
    stop.abort();
    await running.catch(() => {});
    expect(outcome).toBe('output down');
    expect(fingerprints.keys.size).toBe(0);
  }, 60_000);

  it('a triggered run waits for the objects it is reading before it ends: their notifications do not come again', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    await env.put('slow/x.json', '{"v":1}\n');
    env.emulator.setFaults({ latencyMs: 1500 });
    const job = fields(subscription, { 'object-names': ['slow/'], ...triggered });
    const first = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 300 });
    env.emulator.setFaults({});
    expect(lines(first.events)).toEqual(['slow/x.json:1']);
    // A message the run had let go would come back at once; one it kept without an
    // acknowledgement, when its lease (10 s) runs out: the next run starts after that.
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const second = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 300 });
    expect(second.ended.notifications).toBe(0);
  }, 60_000);

  it('a message whose payload does not carry its generation reads nothing', async () => {
    const { topic, subscription, fingerprints, watermarks } = await notified();
    await env.put('malformed/x.json', '{"v":1}\n');
    const [meta] = await env.storage.bucket(env.bucket).file('malformed/x.json').getMetadata();
    const attributes = {
      eventType: 'OBJECT_FINALIZE',
      bucketId: env.bucket,
      objectGeneration: String(meta.generation),
    };
    await topic.publishMessage({ json: { ...meta, generation: 'abc' }, attributes });
    await topic.publishMessage({
      json: { name: 'malformed/x.json' },
      attributes: { ...attributes, objectGeneration: 'abc' },
    });
    await topic.publishMessage({
      json: { name: 'malformed/x.json' },
      attributes: { eventType: 'OBJECT_FINALIZE', bucketId: env.bucket },
    });
    const run = await env.run(fields(subscription, { 'object-names': ['malformed/'], ...triggered }), {
      fingerprints,
      watermarks,
      notificationIdleMs: 1000,
    });
    expect(lines(run.events)).toEqual(['malformed/x.json:1']);
    expect(run.ended.skipped).toMatchObject({ malformed: 3 });
  }, 60_000);

  it('a message whose generation is not a GCS generation, or whose payload names another object or bucket, reads nothing', async () => {
    const { topic, subscription, fingerprints, watermarks } = await notified();
    const job = fields(subscription, { 'object-names': ['forged/'], ...triggered });
    await env.put('forged/victim.json', '{"v":1}\n');
    const first = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 500 });
    expect(lines(first.events)).toEqual(['forged/victim.json:1']);
    const [victim] = await env.storage.bucket(env.bucket).file('forged/victim.json').getMetadata();
    await env.put('forged/unread.json', '{"v":3}\n');
    const [unread] = await env.storage.bucket(env.bucket).file('forged/unread.json').getMetadata();
    const forge = (resource: Record<string, unknown>, attributes: Record<string, string>) =>
      topic.publishMessage({
        json: resource,
        attributes: {
          eventType: 'OBJECT_FINALIZE',
          bucketId: env.bucket,
          objectId: String(resource.name),
          payloadFormat: 'JSON_API_V1',
          ...attributes,
        },
      });
    // Too long for a generation: rounded (or Infinity) it would read the current version
    // again, unpinned, under a fingerprint of its own.
    for (const generation of ['9'.repeat(400), '17957439789300001', '9007199254740992'])
      await forge({ ...victim, generation }, { objectGeneration: generation });
    // The payload names another object, or bucket, than the attributes.
    await forge(
      { ...unread, name: 'forged/unread.json' },
      { objectId: 'forged/victim.json', objectGeneration: String(unread.generation) },
    );
    await forge({ ...unread, bucket: 'another-bucket' }, { objectGeneration: String(unread.generation) });
    const second = await env.run(job, { fingerprints, watermarks, notificationIdleMs: 1000 });
    // unread.json's own notification still reads it, once.
    expect(lines(second.events)).toEqual(['forged/unread.json:3']);
    expect(second.ended.skipped).toMatchObject({ malformed: 5 });
  }, 60_000);

  it('a redeploy that widens object-names lists once more, for the objects it skipped before; one that changes nothing lists nothing', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    const run = (names: string[]) =>
      env.run(fields(subscription, { 'object-names': names, ...triggered }), {
        fingerprints,
        watermarks,
        notificationIdleMs: 500,
      });
    await env.put('narrow/a.json', '{"v":1}\n');
    await env.put('wide/b.json', '{"v":2}\n');
    const narrow = await run(['narrow/']);
    expect(lines(narrow.events)).toEqual(['narrow/a.json:1']);
    expect(narrow.ended).toMatchObject({ list_requests: 0, skipped: { 'not-named': 1 } });
    expect((await run(['narrow/'])).ended).toMatchObject({ list_requests: 0, notifications: 0 });

    // wide/b.json's notification was acknowledged as not named: only a listing finds it.
    const widened = await run(['wide/', 'narrow/']);
    expect(widened.ended.list_requests).toBeGreaterThan(0);
    expect(lines(widened.events)).toEqual(['wide/b.json:2']);
    // The same filters (in another order) list nothing.
    const same = await run(['narrow/', 'wide/']);
    expect(same.ended.list_requests).toBe(0);
    expect(same.events).toEqual([]);
    // Narrower filters read nothing the listing did not cover.
    expect((await run(['wide/'])).ended.list_requests).toBe(0);
  }, 60_000);

  it('ordered, without a trigger: each object is fingerprinted once delivered, with no notification after it', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    const big = Array.from({ length: 100 }, (_, i) => `{"v":${i}}\n`).join('');
    const small = Array.from({ length: 20 }, (_, i) => `{"v":${i}}\n`).join('');
    await Promise.all([env.put('ordered/0-big.json', big), env.put('ordered/1-small.json', small)]);
    const stop = new AbortController();
    const events: RunEvent[] = [];
    const running = env.run(fields(subscription, { 'object-names': ['ordered/'], ordered: true }), {
      fingerprints,
      watermarks,
      signal: stop.signal,
      batchEvents: 10,
      deliver: async (batch) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        events.push(...batch);
      },
    });
    try {
      await until(() => fingerprints.keys.size === 2, 20_000);
    } finally {
      stop.abort();
      await running;
    }
    expect(events).toHaveLength(120);
  }, 60_000);

  it('a run stopped right after its last delivery still acknowledges what it delivered and committed', async () => {
    const { subscription, fingerprints, watermarks } = await notified();
    await env.put('stopped/x.json', '{"v":1}\n');
    // A store as slow as a remote one: the commit ends after the stop.
    const slowCommits = {
      ...fingerprints,
      async commit(job: string, keys: string[], maxAgeMs: number) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        await fingerprints.commit(job, keys, maxAgeMs);
      },
    };
    const stop = new AbortController();
    const job = fields(subscription, { 'object-names': ['stopped/'] });
    const first = await env.run(job, {
      fingerprints: slowCommits,
      watermarks,
      signal: stop.signal,
      deliver: async () => stop.abort(),
    });
    expect(first.ended).toMatchObject({ aborted: true, fingerprinted: 1 });
    const again = await env.run(fields(subscription, { 'object-names': ['stopped/'], ...triggered }), {
      fingerprints,
      watermarks,
      notificationIdleMs: 300,
    });
    expect(again.ended.notifications).toBe(0);
  }, 60_000);
});
