/**
 * A bucket whose notification config sends no payload (`payload_format = "NONE"`, made by
 * hand or by terraform): the input cannot tell which version to read from such a message,
 * so each is skipped, and each run says once, as `job-errors`, what is wrong and how to
 * fix it, not only in a skip counter.
 */
import { randomUUID } from 'node:crypto';
import { PubSub } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKFILL_WATERMARK } from '../../functions/runner/inputs/gcs/index.ts';
import {
  type GcsTestEnv,
  gcsTestEnv,
  memoryFingerprints,
  memoryWatermarks,
  notifiedFields,
} from './helpers.ts';

const PROJECT = 'demo-gcs-notify-no-payload';
let env: GcsTestEnv;
let pubsub: PubSub;

beforeAll(async () => {
  env = await gcsTestEnv(`no-payload-${randomUUID().slice(0, 8)}`);
  pubsub = new PubSub({ projectId: PROJECT });
});
afterAll(async () => {
  await pubsub.close();
  await env.stop();
});

describe('gcs input with notifications sent without a payload', () => {
  it('reports once per run what is wrong and how to fix it', async () => {
    const name = `bare-${randomUUID().slice(0, 8)}`;
    const [topic] = await pubsub.createTopic(name);
    await topic.createSubscription(name, { ackDeadlineSeconds: 10 });
    const [config] = await env.storage
      .bucket(env.bucket)
      .createNotification(`projects/${PROJECT}/topics/${name}`, {
        payloadFormat: 'NONE',
        eventTypes: ['OBJECT_FINALIZE'],
      });
    const subscription = `projects/${PROJECT}/subscriptions/${name}`;
    const watermarks = memoryWatermarks();
    await watermarks.set('job-a', BACKFILL_WATERMARK, subscription);
    for (const i of [1, 2, 3]) await env.put(`bare/${i}.json`, `{"v":${i}}\n`);
    const run = await env.run(notifiedFields(subscription, { trigger: { interval: { duration: '1m' } } }), {
      fingerprints: memoryFingerprints(),
      watermarks,
      notificationIdleMs: 1000,
    });
    expect(run.events).toEqual([]);
    expect(run.ended.skipped).toMatchObject({ 'no-payload': 3 });
    const errors = run.reports.filter((r) => r.type === 'job-errors').map((r) => r.payload);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      input: 'gcs',
      bucket: env.bucket,
      reason: 'no-payload',
      notification_config: `projects/_/buckets/${env.bucket}/notificationConfigs/${config.id}`,
    });
    const message = String(errors[0]!.message);
    expect(message).toContain('payload format NONE');
    expect(message).toContain('JSON_API_V1');
    expect(message).toContain(
      `gcloud storage buckets notifications delete projects/_/buckets/${env.bucket}/notificationConfigs/${config.id}`,
    );
    expect(message).toContain('sluice gcs notify');
    expect(message).toContain('backfill: true');
    expect(run.ended.errors).toBe(1);
  }, 60_000);
});
