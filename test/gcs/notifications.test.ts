/**
 * The `gcs` input with `notifications: {subscription}`, for real: the project's storage
 * emulator publishes Cloud Storage's object notifications to the Pub/Sub emulator, and the
 * input reads the objects they name. The first run lists the bucket once (backfill); later
 * runs list nothing; duplicated, stale and foreign notifications are handled; an input
 * without a trigger reads objects as they are written until it is stopped.
 */
import { randomUUID } from 'node:crypto';
import { PubSub } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKFILL_WATERMARK } from '../../functions/runner/inputs/gcs/index.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import { cloudWorkerProblems, wokenByNotifications } from '../../shared/job/cloud-worker-rules.ts';
import { until } from '../helpers/until.ts';
import {
  type GcsTestEnv,
  gcsTestEnv,
  memoryFingerprints,
  memoryWatermarks,
  notifiedFields,
  notifiedSubscription,
} from './helpers.ts';

const PROJECT = 'demo-gcs-notify';
let env: GcsTestEnv;
let pubsub: PubSub;

beforeAll(async () => {
  env = await gcsTestEnv(`notified-${randomUUID().slice(0, 8)}`);
  pubsub = new PubSub({ projectId: PROJECT });
});
afterAll(async () => {
  await pubsub.close();
  await env.stop();
});

const notifiedBucket = async () => (await notifiedSubscription(env, pubsub, PROJECT)).subscription;
const fields = notifiedFields;

const lines = (events: RunEvent[]) => events.map((e) => `${e.object}:${e.v}`).sort();

describe('gcs input with notifications', () => {
  it('lists once, then reads what notifications name: each object version once, stale and duplicate ones skipped', async () => {
    const subscription = await notifiedBucket();
    const fingerprints = memoryFingerprints();
    const watermarks = memoryWatermarks();
    const run = (extra: Record<string, unknown> = {}) =>
      env.run(fields(subscription, { trigger: { interval: { duration: '1m' } }, ...extra }), {
        fingerprints,
        watermarks,
        notificationIdleMs: 300,
      });
    await env.put('in/a.json', '{"v":1}\n');
    await env.put('in/b.json', '{"v":2}\n');

    // First run: the listing reads both (their notifications then find them fingerprinted).
    const first = await run();
    expect(lines(first.events)).toEqual(['in/a.json:1', 'in/b.json:2']);
    expect(first.ended.list_requests).toBeGreaterThan(0);
    expect(first.ended.notifications).toBe(2);
    expect(await watermarks.get('job-a', BACKFILL_WATERMARK)).toBe(subscription);

    // New objects, one written twice before the run (its first version is gone: stale),
    // one outside object-names, and a notification delivered twice.
    await env.put('in/c.json', '{"v":3}\n');
    await env.put('in/d.json', '{"v":4}\n');
    await env.put('in/d.json', '{"v":5}\n');
    await env.put('other/e.json', '{"v":6}\n');
    const [meta] = await env.storage.bucket(env.bucket).file('in/c.json').getMetadata();
    await pubsub.topic(subscription.replace('/subscriptions/', '/topics/')).publishMessage({
      json: meta,
      attributes: {
        eventType: 'OBJECT_FINALIZE',
        bucketId: env.bucket,
        objectId: 'in/c.json',
        objectGeneration: String(meta.generation),
      },
    });
    const second = await run({ 'object-names': ['in/'] });
    expect(lines(second.events)).toEqual(['in/c.json:3', 'in/d.json:5']);
    expect(second.ended.list_requests).toBe(0);
    // c, d twice, e, the copy, and the delete that the overwrite of d sent (the config has every event type).
    expect(second.ended.notifications).toBe(6);
    expect(second.ended.skipped).toMatchObject({ stale: 1, 'not-named': 1, 'not-finalize': 1 });
    const skipped = second.ended.skipped as Record<string, number>;
    expect((skipped.duplicate ?? 0) + (skipped.fingerprinted ?? 0)).toBe(1);

    // Everything was acknowledged: nothing comes again, and nothing is listed.
    const third = await run();
    expect(third.events).toEqual([]);
    expect(third.ended.list_requests).toBe(0);
    expect(third.ended.notifications).toBe(0);

    // backfill: true lists again (and reads nothing new).
    const backfill = await run({ 'object-names': ['in/'], notifications: { subscription, backfill: true } });
    expect(backfill.ended.list_requests).toBeGreaterThan(0);
    expect(backfill.events).toEqual([]);
  }, 60_000);

  it('without a trigger, reads objects as they are written until stopped', async () => {
    const subscription = await notifiedBucket();
    const stop = new AbortController();
    const events: RunEvent[] = [];
    const running = env.run(fields(subscription, { 'object-names': ['live/'] }), {
      signal: stop.signal,
      deliver: async (batch) => {
        events.push(...batch);
      },
    });
    for (let i = 0; i < 5; i++) await env.put(`live/${i}.json`, `{"v":${i}}\n`);
    await until(() => events.length >= 5, 15_000);
    stop.abort();
    const { ended } = await running;
    expect(lines(events)).toEqual([0, 1, 2, 3, 4].map((i) => `live/${i}.json:${i}`));
    expect(ended.aborted).toBe(true);
    expect(ended.notifications).toBe(5);
  }, 60_000);

  it('fails the run with an error naming the subscription when it does not exist', async () => {
    const missing = `projects/${PROJECT}/subscriptions/missing-${randomUUID().slice(0, 8)}`;
    const watermarks = memoryWatermarks();
    await watermarks.set('job-a', BACKFILL_WATERMARK, missing);
    const run = env.run(fields(missing, { trigger: { interval: { duration: '1m' } } }), {
      watermarks,
      notificationIdleMs: 300,
    });
    const error = await run.then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(/does not exist|not found/i);
    expect(error?.message).toContain(missing.split('/').pop());
  });

  it('is refused without fingerprinting and with download-objects; on the cloud worker, untriggered ones are woken', async () => {
    const { validateJob } = await import('../../shared/job/index.ts');
    const job = (gcs: Record<string, unknown>) =>
      validateJob(
        {
          name: 'j',
          input: {
            gcs: {
              'bucket-name': 'b-1',
              credentials: { 'storage-url': 'gs://b-1' },
              'object-names': [],
              notifications: { subscription: 'uploads' },
              ...gcs,
            },
          },
          output: { print: {} },
        },
        { level: 'rendered' },
      );
    const unfingerprinted = job({});
    expect(unfingerprinted.ok).toBe(false);
    expect(JSON.stringify(unfingerprinted)).toContain('must be true with notifications');
    const download = job({ fingerprinting: true, mode: 'download-objects' });
    expect(JSON.stringify(download)).toContain('mode download-objects reads named objects only');
    const badName = job({ fingerprinting: true, notifications: { subscription: 'projects/x/topics/y' } });
    expect(JSON.stringify(badName)).toContain('must be a Pub/Sub subscription');
    const valid = job({ fingerprinting: true });
    expect(valid.ok).toBe(true);
    // On the cloud worker a notified input runs on its trigger, or without one when its
    // notifications wake it (test/runs/wake.test.ts).
    const gcs = {
      notifications: { subscription: 'uploads' },
      credentials: { 'service-account': { key: 'k' } },
    };
    expect(cloudWorkerProblems({ input: { gcs } })).toEqual([]);
    expect(wokenByNotifications({ input: { gcs } })).toBe(true);
    const triggered = { ...gcs, trigger: { interval: { duration: '1m' } } };
    expect(cloudWorkerProblems({ input: { gcs: triggered } })).toEqual([]);
    expect(wokenByNotifications({ input: { gcs: triggered } })).toBe(false);
  });
});
