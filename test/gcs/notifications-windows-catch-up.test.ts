/**
 * A windowed `gcs` input with notifications catching up over windows: the run of the
 * oldest window receives, first, notifications of objects stamped in later windows. It holds
 * them (they are not due), and Pub/Sub flow control counts held messages: with 1,000 held it
 * received nothing more, so the run of the oldest window ended without the objects of its
 * window, and the next window's run then found them stamped before its window and skipped
 * them (acknowledged: read by no run, ever). Now a run holding that many for later windows
 * stops receiving and lists its window instead, as a backfill does.
 */
import { randomUUID } from 'node:crypto';
import { PubSub } from '@google-cloud/pubsub';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BACKFILL_WATERMARK } from '../../functions/runner/inputs/gcs/index.ts';
import { until } from '../helpers/until.ts';
import {
  type GcsTestEnv,
  gcsTestEnv,
  memoryFingerprints,
  memoryWatermarks,
  notifiedFields,
  notifiedSubscription,
} from './helpers.ts';

const PROJECT = 'demo-gcs-notify-catch-up';
let env: GcsTestEnv;
let pubsub: PubSub;

beforeAll(async () => {
  env = await gcsTestEnv(`catch-up-${randomUUID().slice(0, 8)}`);
  pubsub = new PubSub({ projectId: PROJECT });
});
afterAll(async () => {
  await pubsub.close();
  await env.stop();
});

it('reads every notified object once when more than a thousand of later windows wait', async () => {
  const { subscription } = await notifiedSubscription(env, pubsub, PROJECT);
  const fingerprints = memoryFingerprints();
  const watermarks = memoryWatermarks();
  await watermarks.set('job-a', BACKFILL_WATERMARK, subscription);
  // 5 objects of the first day, then 1,200 of the second: more than a run holds at once.
  const later = Array.from({ length: 1200 }, (_, i) => `days/2026-01-02/${String(i).padStart(4, '0')}.json`);
  const earlier = Array.from({ length: 5 }, (_, i) => `days/2026-01-01/${i}.json`);
  for (const name of earlier) await env.put(name, '{"v":1}\n');
  for (let i = 0; i < later.length; i += 20)
    await Promise.all(later.slice(i, i + 20).map((name) => env.put(name, '{"v":1}\n')));
  const job = notifiedFields(subscription, {
    'object-names': ['days/'],
    'timestamp-mode': { 'object-name-pattern': 'days/(?<Y>\\d{4})-(?<m>\\d{2})-(?<d>\\d{2})/' },
    trigger: { interval: { duration: '1d', window: { size: '1d' } } },
  });
  const day = (d: number) => new Date(Date.UTC(2026, 0, d));
  const window = (d: number) => ({ start: day(d), end: day(d + 1) });
  const options = { fingerprints, watermarks, notificationIdleMs: 1000 };
  const read: string[] = [];
  let late = 0;
  const run = async (d: number) => {
    const { events, ended } = await env.run(job, { ...options, window: window(d) });
    read.push(...events.map((e) => String(e.object)));
    late += Number(ended.late ?? 0);
  };
  await run(1);
  await run(2);
  // What was on its way to a closed run comes again once its lease (10 s) runs out.
  await until(
    async () => {
      await run(3);
      return read.length >= earlier.length + later.length;
    },
    60_000,
    'every object read',
  );
  expect(read.toSorted()).toEqual([...earlier, ...later].toSorted());
  expect(late).toBeGreaterThan(0);
}, 120_000);
