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
import { setUpBucketNotifications, withPublisher } from '../../cli/gcs-notify.ts';
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
  runCli(['gcs', 'notify', ...args, '--project', PROJECT], {
    env: { STORAGE_EMULATOR_HOST: emulator.url, PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST },
  });

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
    expect(first.stderr).toContain(
      `subscription: projects/demo-notify-cli/subscriptions/sluice-gcs-${bucket}-orders`,
    );
    expect(first.code).toBe(0);
    const setup = JSON.parse(first.stdout);
    expect(setup).toMatchObject({
      bucket,
      topic: `projects/${PROJECT}/topics/sluice-gcs-${bucket}-orders`,
      subscription: `projects/${PROJECT}/subscriptions/sluice-gcs-${bucket}-orders`,
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
    const topics = (await pubsub.getTopics())[0].map((t) => t.name);
    expect(topics.filter((t) => t.endsWith('-nothing-made'))).toEqual([]);

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
    expect((await pubsub.topic(`sluice-gcs-${bucket}-wake-bad`).exists())[0]).toBe(false);
    expect((await storage.bucket(bucket).getNotifications())[0]).toEqual([]);
  });

  it('refuses a project ID the job would refuse, before making anything', async () => {
    const bucket = `bad-project-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    const env = {
      STORAGE_EMULATOR_HOST: emulator.url,
      PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST,
    };
    for (const project of ['demo', 'Demo-Project', 'example.com:project', 'ends-with-dash-']) {
      const refused = await runCli(['gcs', 'notify', bucket, '--job', 'orders', '--project', project], {
        env,
      });
      expect(refused.code, project).toBe(2);
      expect(refused.stderr, project).toContain(`"${project}" is not a project ID`);
    }
    const fromEnv = await runCli(['gcs', 'notify', bucket, '--job', 'orders'], {
      env: { ...env, GOOGLE_CLOUD_PROJECT: 'demo' },
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('"demo" (GOOGLE_CLOUD_PROJECT) is not a project ID');
    expect((await new PubSub({ projectId: 'demo' }).topic(`sluice-gcs-${bucket}-orders`).exists())[0]).toBe(
      false,
    );
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
      wakeSubscription: `projects/${PROJECT}/subscriptions/sluice-gcs-${bucket}-woken-wake`,
      created: ['topic', 'subscription', 'notification config', 'wake subscription'],
    });
    expect(made.stderr).toContain('also wakes job woken on the cloud worker');
    const [metadata] = await pubsub.subscription(setup.wakeSubscription).getMetadata();
    expect(metadata.pushConfig?.pushEndpoint).toBe('https://runner-abc.a.run.app/wake?tenant=acme&job=woken');
    expect(metadata.pushConfig?.oidcToken?.serviceAccountEmail).toBe('push@p.iam.gserviceaccount.com');
    // Made for the runner, as terraform makes its pushes' tokens: Cloud Run checks the audience.
    expect(metadata.pushConfig?.oidcToken?.audience).toBe('https://runner-abc.a.run.app');
    expect(metadata.topic).toBe(setup.topic);
  });

  it('makes subscriptions that never expire and keep notifications 7 days, and says what an existing one lacks', async () => {
    const bucket = `kept-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    const made = await notify([
      bucket,
      '--job',
      'kept',
      '--tenant',
      'acme',
      '--wake',
      'https://runner.example.com',
      '-o',
      'json',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const setup = JSON.parse(made.stdout);
    for (const name of [setup.subscription, setup.wakeSubscription]) {
      const [metadata] = await pubsub.subscription(name).getMetadata();
      // An expiration policy without a ttl: never deleted for want of activity.
      expect(metadata.expirationPolicy, name).toEqual({ ttl: null });
    }
    const [metadata] = await pubsub.subscription(setup.subscription).getMetadata();
    expect(metadata.messageRetentionDuration).toMatchObject({ seconds: String(7 * 24 * 3600) });

    // One made before (Pub/Sub's defaults, and a retention of an hour) is brought up to it
    // where Pub/Sub lets it be changed, and what could not be is said, with the command.
    const older = `kept-older-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(older);
    const [topic] = await pubsub.createTopic(`sluice-gcs-${older}-kept`);
    await topic.createSubscription(`sluice-gcs-${older}-kept`, {
      ackDeadlineSeconds: 60,
      messageRetentionDuration: { seconds: 3600 },
    });
    const again = await notify([older, '--job', 'kept', '-o', 'json']);
    expect(again.code, again.stderr).toBe(0);
    const result = JSON.parse(again.stdout);
    expect(result.created).toEqual(['notification config']);
    expect(result.updated).toEqual(['subscription message retention: 7 days']);
    const [updated] = await pubsub.subscription(result.subscription).getMetadata();
    expect(updated.messageRetentionDuration).toMatchObject({ seconds: String(7 * 24 * 3600) });
    // The Pub/Sub emulator cannot change an expiration policy (Pub/Sub can).
    expect(again.stderr).toContain(`warning: subscription ${result.subscription} may expire`);
    expect(again.stderr).toContain(
      `gcloud pubsub subscriptions update ${result.subscription} --expiration-period=never`,
    );
  });

  it("grants the service agent of the bucket's project, not the topic's", async () => {
    const owner = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-bucket-owner' });
    const bucket = `owned-${randomUUID().slice(0, 8)}`;
    await owner.createBucket(bucket);
    const made = await notify([bucket, '--job', 'orders', '-o', 'json']);
    expect(made.code, made.stderr).toBe(0);
    const [bucketMeta] = await owner.bucket(bucket).getMetadata();
    const [topicProjectAgent] = await storage.getServiceAccount();
    expect(JSON.parse(made.stdout).serviceAgent).toBe(
      `service-${bucketMeta.projectNumber}@gs-project-accounts.iam.gserviceaccount.com`,
    );
    expect(JSON.parse(made.stdout).serviceAgent).not.toBe(topicProjectAgent.emailAddress);
  });

  it('refuses what exists and would not deliver (or would deliver twice), says how to clear it, and makes nothing', async () => {
    const bucket = `clash-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    const madeNames = async () =>
      (await pubsub.getTopics())[0].map((t) => t.name).filter((n) => n.includes(bucket));
    const madeSubscriptions = async () =>
      (await pubsub.getSubscriptions())[0].map((sub) => sub.name).filter((n) => n.includes(bucket));

    // Another config of the bucket on the job's topic, for deletes only.
    const [deletesTopic] = await pubsub.createTopic(`sluice-gcs-${bucket}-deletes`);
    const [deletes] = await storage
      .bucket(bucket)
      .createNotification(deletesTopic.name, { eventTypes: ['OBJECT_DELETE'] });
    const clash = await notify([bucket, '--job', 'deletes']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`notification config ${deletes.id}`);
    expect(clash.stderr).toContain(
      `gcloud storage buckets notifications delete projects/_/buckets/${bucket}/notificationConfigs/${deletes.id}`,
    );
    expect(await madeSubscriptions()).toEqual([]);

    // The job's subscription name taken by a subscription of another topic.
    const [unrelated] = await pubsub.createTopic(`unrelated-${bucket}`);
    await unrelated.createSubscription(`sluice-gcs-${bucket}-taken`);
    const taken = await notify([bucket, '--job', 'taken']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`receives topic ${unrelated.name}`);
    expect(taken.stderr).toContain('gcloud pubsub subscriptions delete');
    expect((await madeNames()).sort()).toEqual([deletesTopic.name, unrelated.name].sort());

    // Set up, then asked again with a prefix: a second config on the topic would announce
    // each object under the prefix twice.
    expect((await notify([bucket, '--job', 'orders'])).code).toBe(0);
    const before = (await storage.bucket(bucket).getNotifications())[0].length;
    const narrowed = await notify([bucket, '--job', 'orders', '--prefix', 'in/']);
    expect(narrowed.code).toBe(1);
    expect(narrowed.stderr).toContain('already sends OBJECT_FINALIZE');
    expect((await storage.bucket(bucket).getNotifications())[0]).toHaveLength(before);
  });

  it('a step that fails says what was made before it, and running again goes on from there', async () => {
    const bucket = `full-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    // Cloud Storage's limit: ten configs of the bucket already fire on new objects.
    const [elsewhere] = await pubsub.createTopic(`elsewhere-${bucket}`);
    const configs = [];
    for (let i = 0; i < 10; i++)
      configs.push(
        (
          await storage.bucket(bucket).createNotification(elsewhere.name, { eventTypes: ['OBJECT_FINALIZE'] })
        )[0],
      );
    const stopped = await notify([bucket, '--job', 'orders']);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('notification configs for OBJECT_FINALIZE');
    expect(stopped.stderr).toContain(
      'made before it stopped: topic, subscription (kept: running the command again goes on from there)',
    );
    expect(stopped.stderr).toContain('fix what the message says and run the command again');

    await configs[0]!.delete();
    const again = await notify([bucket, '--job', 'orders', '-o', 'json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).created).toEqual(['notification config']);
  });

  it('tries the config again while a fresh topic has not reached Cloud Storage, saying so', async () => {
    const bucket = `fresh-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    // Cloud Storage refuses configs to the new topic for a while, as a grant spreads.
    emulator.setFaults({ grantDelayMs: 1500 });
    const said: string[] = [];
    try {
      const setup = await setUpBucketNotifications(
        { bucket, name: `sluice-gcs-${bucket}-orders`, project: PROJECT },
        { storage, pubsub },
        {
          env: { STORAGE_EMULATOR_HOST: emulator.url },
          wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms / 10)),
          onWait: (message) => said.push(message),
        },
      );
      expect(setup.created).toEqual(['topic', 'subscription', 'notification config']);
    } finally {
      emulator.setFaults({});
    }
    expect(said.length).toBeGreaterThan(0);
    expect(said[0]).toContain('cannot publish to');
    expect(said[0]).toContain('trying again in 10 s (1/3)');
  });

  it('refuses to set up half on emulators', async () => {
    const half = await runCli(['gcs', 'notify', 'some-bucket', '--job', 'j', '--project', PROJECT], {
      env: { STORAGE_EMULATOR_HOST: emulator.url },
    });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('STORAGE_EMULATOR_HOST is set but PUBSUB_EMULATOR_HOST is not');
  });
});

describe('the publisher grant', () => {
  const agent = 'serviceAccount:service-1@gs-project-accounts.iam.gserviceaccount.com';
  it('is added to the unconditional binding, once, and never to a conditional one', () => {
    const conditional = {
      role: 'roles/pubsub.publisher',
      members: ['user:a@example.com'],
      condition: { title: 'weekdays', expression: 'request.time.getDayOfWeek() < 5' },
    };
    const granted = withPublisher({ bindings: [conditional] }, agent)!;
    expect(granted.bindings).toEqual([conditional, { role: 'roles/pubsub.publisher', members: [agent] }]);
    expect(withPublisher(granted, agent)).toBeUndefined();
    const joined = withPublisher(
      { bindings: [{ role: 'roles/pubsub.publisher', members: ['user:b@example.com'] }] },
      agent,
    )!;
    expect(joined.bindings).toEqual([
      { role: 'roles/pubsub.publisher', members: ['user:b@example.com', agent] },
    ]);
  });
});
