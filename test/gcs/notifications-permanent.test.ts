/**
 * A notified object that fails for good (Cloud Storage answers 400: the request is wrong,
 * and asking again gives the same answer) is reported, counted as failed and its
 * notification acknowledged, not offered again every 30 s for ever; a listing
 * (`backfill: true`) can still read it. A 403 is offered again: a permission granted a
 * moment ago may not have reached Cloud Storage yet.
 */
import { randomUUID } from 'node:crypto';
import { PubSub } from '@google-cloud/pubsub';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKFILL_WATERMARK } from '../../functions/runner/inputs/gcs/index.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import type { FaultConfig } from '../../local/storage-emulator/faults.ts';
import {
  type GcsTestEnv,
  gcsTestEnv,
  memoryFingerprints,
  memoryWatermarks,
  notifiedFields,
  notifiedSubscription,
} from './helpers.ts';

const PROJECT = 'demo-gcs-notify-permanent';
let env: GcsTestEnv;
let pubsub: PubSub;

beforeAll(async () => {
  env = await gcsTestEnv(`permanent-${randomUUID().slice(0, 8)}`);
  pubsub = new PubSub({ projectId: PROJECT });
});
afterEach(() => env.emulator.setFaults({}));
afterAll(async () => {
  await pubsub.close();
  await env.stop();
});

const lines = (events: RunEvent[]) => events.map((e) => `${e.object}:${e.v}`).sort();
const answering = (status: 400 | 403): FaultConfig => ({ errorRate: 1, errorStatus: status });

describe('gcs input with notifications, an object that fails for good', () => {
  for (const status of [400] as const) {
    it(`(${status}) is reported once, its notification acknowledged; a backfill reads it`, async () => {
      const { subscription } = await notifiedSubscription(env, pubsub, PROJECT);
      const fingerprints = memoryFingerprints();
      const watermarks = memoryWatermarks();
      await watermarks.set('job-a', BACKFILL_WATERMARK, subscription);
      const prefix = `denied-${status}/`;
      const job = notifiedFields(subscription, {
        'object-names': [prefix],
        trigger: { interval: { duration: '1m' } },
      });
      const run = (extra: Record<string, unknown> = {}) =>
        env.run({ ...job, ...extra }, { fingerprints, watermarks, notificationIdleMs: 1000 });
      await env.put(`${prefix}x.json`, '{"v":1}\n');
      env.emulator.setFaults(answering(status));
      const first = await run();
      env.emulator.setFaults({});
      expect(first.events).toEqual([]);
      expect(first.ended).toMatchObject({ notifications: 1, failed_objects: 1, errors: 1 });
      const errors = first.reports.filter((r) => r.type === 'job-errors').map((r) => r.payload);
      expect(errors).toEqual([
        expect.objectContaining({ object: `${prefix}x.json`, status, transient: false }),
      ]);

      // Its notification is not offered again.
      const second = await run();
      expect(second.ended).toMatchObject({ notifications: 0, failed_objects: 0 });
      expect(second.events).toEqual([]);

      // A listing reads it.
      const backfill = await run({ notifications: { subscription, backfill: true } });
      expect(lines(backfill.events)).toEqual([`${prefix}x.json:1`]);
    }, 60_000);
  }

  it('(403) is offered again, and read once the permission has come', async () => {
    const { subscription } = await notifiedSubscription(env, pubsub, PROJECT);
    const fingerprints = memoryFingerprints();
    const watermarks = memoryWatermarks();
    await watermarks.set('job-a', BACKFILL_WATERMARK, subscription);
    const job = notifiedFields(subscription, {
      'object-names': ['denied-403/'],
      trigger: { interval: { duration: '1m' } },
    });
    const run = () => env.run(job, { fingerprints, watermarks, notificationIdleMs: 1000 });
    await env.put('denied-403/x.json', '{"v":1}\n');
    env.emulator.setFaults(answering(403));
    const first = await run();
    env.emulator.setFaults({});
    expect(first.ended).toMatchObject({ notifications: 1, failed_objects: 1 });
    // Offered again: by the next run, or (its nack not yet back on a busy machine, the run over
    // after a quiet second) by one of the next few.
    const later: RunEvent[] = [];
    for (let attempt = 0; attempt < 5 && later.length === 0; attempt++) later.push(...(await run()).events);
    expect(lines(later)).toEqual(['denied-403/x.json:1']);
  }, 60_000);
});
