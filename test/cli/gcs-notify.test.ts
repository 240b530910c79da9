/**
 * `sluice gcs notify BUCKET --job NAME` against the storage and Pub/Sub emulators: it makes
 * the topic, the subscription and the bucket's notification config, a new object then
 * reaches the subscription, a second run changes nothing, and bad input says what is wrong
 * with the right exit code and makes nothing.
 */
import { randomUUID } from 'node:crypto';
import { type Message, PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { runCli } from '../helpers/cli.ts';

const PROJECT = 'demo-notify-cli';
let emulator: StorageEmulator;
let storage: Storage;
let pubsub: PubSub;

beforeAll(async () => {
  emulator = await startStorageEmulator({ port: 0 });
  storage = new Storage({ apiEndpoint: emulator.url, projectId: PROJECT });
  pubsub = new PubSub({ projectId: PROJECT });
});
afterAll(async () => {
  await pubsub.close();
  await emulator.stop();
});

const notify = (args: string[]) =>
  runCli(['gcs', 'notify', ...args, '--project', PROJECT], { env: { STORAGE_EMULATOR_HOST: emulator.url } });

/** The first message on `subscription` (acknowledged). */
function firstMessage(subscription: string): Promise<Message> {
  const sub = pubsub.subscription(subscription);
  return new Promise<Message>((resolve) => {
    sub.on('message', (message: Message) => {
      message.ack();
      resolve(message);
    });
  }).finally(() => sub.close());
}

describe('sluice gcs notify', () => {
  it('sets up topic, subscription and notification config once; a new object then reaches the subscription', async () => {
    const bucket = `landing-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    const first = await notify([bucket, '--job', 'orders', '-o', 'json']);
    expect(first.stderr).toContain('subscription: projects/demo-notify-cli/subscriptions/sluice-gcs-orders');
    expect(first.code).toBe(0);
    const setup = JSON.parse(first.stdout);
    expect(setup).toMatchObject({
      bucket,
      topic: `projects/${PROJECT}/topics/sluice-gcs-orders`,
      subscription: `projects/${PROJECT}/subscriptions/sluice-gcs-orders`,
      created: ['topic', 'subscription', 'notification config'],
    });

    const again = await notify([bucket, '--job', 'orders', '-o', 'json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ notification: setup.notification, created: [] });
    const [configs] = await storage.bucket(bucket).getNotifications();
    expect(configs).toHaveLength(1);

    const arrived = firstMessage(setup.subscription);
    await storage.bucket(bucket).file('in/a.json').save('{"a":1}\n');
    const message = await arrived;
    expect(message.attributes).toMatchObject({
      eventType: 'OBJECT_FINALIZE',
      bucketId: bucket,
      objectId: 'in/a.json',
    });
    expect(JSON.parse(message.data.toString())).toMatchObject({ name: 'in/a.json', bucket });
  });

  it('says what is wrong, exits non-zero, and makes nothing', async () => {
    const badName = await notify(['Not_A_Bucket!', '--job', 'orders']);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('is not a bucket name');

    const missing = await notify([`missing-${randomUUID().slice(0, 8)}`, '--job', 'nothing-made']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
    const [exists] = await pubsub.topic('sluice-gcs-nothing-made').exists();
    expect(exists).toBe(false);

    const noJob = await notify(['some-bucket']);
    expect(noJob.code).toBe(2);
    expect(noJob.stderr).toContain('--job');

    const noProject = await runCli(['gcs', 'notify', 'some-bucket', '--job', 'j'], {
      env: { STORAGE_EMULATOR_HOST: emulator.url, GOOGLE_CLOUD_PROJECT: '', PUBSUB_PROJECT_ID: '' },
    });
    expect(noProject.code).toBe(2);
    expect(noProject.stderr).toContain('--project');
  });
});
