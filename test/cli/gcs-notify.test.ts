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

    // --wake needs a tenant and a plain URL; nothing is made when they are wrong.
    const bucket = `wake-bad-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    for (const [args, says] of [
      [['--wake', 'https://runner.example.com'], '--wake needs --tenant'],
      [['--wake', 'not a url', '--tenant', 'acme'], 'is not a URL'],
      [['--wake', 'http://runner.example.com', '--tenant', 'acme'], 'must be https'],
      [['--wake', 'https://runner.example.com/?token=x', '--tenant', 'acme'], 'without a query'],
      [['--tenant', 'acme'], 'go with --wake'],
    ] as const) {
      const bad = await notify([bucket, '--job', 'wake-bad', ...args]);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr, args.join(' ')).toContain(says);
    }
    expect((await pubsub.topic('sluice-gcs-wake-bad').exists())[0]).toBe(false);
    expect((await storage.bucket(bucket).getNotifications())[0]).toEqual([]);
  });

  it('--wake adds a push subscription to the runner function that names the tenant and job', async () => {
    const bucket = `wake-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    const made = await notify([
      bucket,
      '--job',
      'woken',
      '--tenant',
      'acme',
      '--wake',
      'https://runner-abc.a.run.app',
      '--push-service-account',
      'push@p.iam.gserviceaccount.com',
      '-o',
      'json',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const setup = JSON.parse(made.stdout);
    expect(setup).toMatchObject({
      wakeSubscription: `projects/${PROJECT}/subscriptions/sluice-gcs-woken-wake`,
      created: ['topic', 'subscription', 'notification config', 'wake subscription'],
    });
    expect(made.stderr).toContain('also wakes job woken on the cloud worker');
    const [metadata] = await pubsub.subscription(setup.wakeSubscription).getMetadata();
    expect(metadata.pushConfig?.pushEndpoint).toBe('https://runner-abc.a.run.app/wake?tenant=acme&job=woken');
    expect(metadata.pushConfig?.oidcToken?.serviceAccountEmail).toBe('push@p.iam.gserviceaccount.com');
    expect(metadata.topic).toBe(setup.topic);
  });
});
