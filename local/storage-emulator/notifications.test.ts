/**
 * The storage emulator's Pub/Sub notifications, through the official clients: a
 * notification config made with `bucket.createNotification`, and the messages an upload,
 * an overwrite and a delete send to the Pub/Sub emulator, with Cloud Storage's attributes
 * and the object resource as data.
 */
import { randomUUID } from 'node:crypto';
import { type Message, PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from './index.ts';

const PROJECT = 'demo-notify';
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

/** Pulls until `count` messages came (or 10 s passed), acknowledging each. */
async function pull(subscription: string, count: number): Promise<Message[]> {
  const got: Message[] = [];
  const sub = pubsub.subscription(subscription);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    sub.on('message', (message: Message) => {
      message.ack();
      got.push(message);
      if (got.length >= count) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await sub.close();
  return got;
}

describe('storage emulator notifications', () => {
  it('publishes finalize and delete messages as Cloud Storage does, until the config is deleted', async () => {
    const name = `uploads-${randomUUID().slice(0, 8)}`;
    const [topic] = await pubsub.createTopic(name);
    await topic.createSubscription(name);
    const [bucket] = await storage.createBucket('notified');
    const [notification, resource] = await bucket.createNotification(name, {
      payloadFormat: 'JSON_API_V1',
      eventTypes: ['OBJECT_FINALIZE', 'OBJECT_DELETE'],
    });
    expect(resource).toMatchObject({ topic: `//pubsub.googleapis.com/projects/${PROJECT}/topics/${name}` });

    await bucket.file('a.json').save('{"v":1}');
    const [first] = await bucket.file('a.json').getMetadata();
    await bucket.file('a.json').save('{"v":2}');
    const [second] = await bucket.file('a.json').getMetadata();
    await bucket.file('a.json').delete();

    const messages = await pull(name, 4);
    const seen = messages.map((m) => [m.attributes.eventType, m.attributes.objectGeneration]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['OBJECT_FINALIZE', String(first.generation)],
        ['OBJECT_DELETE', String(first.generation)],
        ['OBJECT_FINALIZE', String(second.generation)],
        ['OBJECT_DELETE', String(second.generation)],
      ]),
    );
    expect(messages).toHaveLength(4);
    const overwrite = messages.find(
      (m) =>
        m.attributes.eventType === 'OBJECT_FINALIZE' &&
        m.attributes.objectGeneration === String(second.generation),
    )!;
    expect(overwrite.attributes).toMatchObject({
      bucketId: 'notified',
      objectId: 'a.json',
      payloadFormat: 'JSON_API_V1',
      overwroteGeneration: String(first.generation),
      notificationConfig: `projects/_/buckets/notified/notificationConfigs/${notification.id}`,
      eventTime: second.updated,
    });
    expect(JSON.parse(overwrite.data.toString())).toMatchObject({
      kind: 'storage#object',
      name: 'a.json',
      bucket: 'notified',
      generation: String(second.generation),
      size: '7',
    });

    const [listed] = await bucket.getNotifications();
    expect(listed.map((n) => n.id)).toEqual([notification.id]);
    await notification.delete();
    expect((await bucket.getNotifications())[0]).toEqual([]);
  });

  it('refuses, as Cloud Storage does, a topic that does not exist and fields of the wrong type; takes any project ID the Pub/Sub emulator takes', async () => {
    const [bucket] = await storage.createBucket(`typed-${randomUUID().slice(0, 8)}`);
    const configs = `${emulator.url}/storage/v1/b/${bucket.name}/notificationConfigs`;
    const post = (body: unknown) =>
      fetch(configs, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const missing = await post({ topic: `//pubsub.googleapis.com/projects/${PROJECT}/topics/never-made` });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toContain('never-made');

    const name = `typed-${randomUUID().slice(0, 8)}`;
    await pubsub.createTopic(name);
    const topic = `//pubsub.googleapis.com/projects/${PROJECT}/topics/${name}`;
    for (const [body, says] of [
      [{ topic, event_types: 'OBJECT_FINALIZE' }, 'event_types'],
      [{ topic, event_types: ['OBJECT_CREATE'] }, 'event_types'],
      [{ topic, custom_attributes: { n: 5 } }, 'custom_attributes'],
      [{ topic, payload_format: 'XML' }, 'payload_format'],
    ] as const) {
      const refused = await post(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect((await refused.json()).error.message).toContain(says);
    }
    expect((await bucket.getNotifications())[0]).toEqual([]);

    // A short project ID (the Pub/Sub emulator takes any): the config is made and delivers.
    const short = new PubSub({ projectId: 'demo' });
    const [shortTopic] = await short.createTopic(name);
    const [made] = await bucket.createNotification(`projects/demo/topics/${name}`);
    expect(made.id).toBeTruthy();
    await shortTopic.delete();
    await short.close();
  });

  it("keeps Cloud Storage's limit: 10 configs that fire on one event", async () => {
    const [bucket] = await storage.createBucket(`limits-${randomUUID().slice(0, 8)}`);
    const name = `limits-${randomUUID().slice(0, 8)}`;
    await pubsub.createTopic(name);
    for (let i = 0; i < 10; i++) await bucket.createNotification(name, { eventTypes: ['OBJECT_DELETE'] });
    await expect(bucket.createNotification(name)).rejects.toMatchObject({ code: 400 });
    await expect(bucket.createNotification(name, { eventTypes: ['OBJECT_DELETE'] })).rejects.toMatchObject({
      code: 400,
    });
    for (let i = 0; i < 10; i++) await bucket.createNotification(name, { eventTypes: ['OBJECT_FINALIZE'] });
    expect((await bucket.getNotifications())[0]).toHaveLength(20);
  });

  it("names the service agent of a bucket's project, as projects.serviceAccount.get does", async () => {
    const owner = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-bucket-owner' });
    const [bucket] = await owner.createBucket(`owned-${randomUUID().slice(0, 8)}`);
    const [meta] = await bucket.getMetadata();
    expect(meta.projectNumber).toMatch(/^\d{12}$/);
    const [agent] = await owner.getServiceAccount();
    expect(agent.emailAddress).toBe(
      `service-${meta.projectNumber}@gs-project-accounts.iam.gserviceaccount.com`,
    );
    const [other] = await storage.getServiceAccount();
    expect(other.emailAddress).not.toBe(agent.emailAddress);
  });

  it('refuses a config without a proper topic', async () => {
    const [bucket] = await storage.createBucket('notified-bad');
    await expect(bucket.createNotification('//pubsub.googleapis.com/not-a-topic')).rejects.toMatchObject({
      code: 400,
    });
    expect((await bucket.getNotifications())[0]).toEqual([]);
    const notJson = await fetch(`${emulator.url}/storage/v1/b/notified-bad/notificationConfigs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{topic',
    });
    expect(notJson.status).toBe(400);
    // Every JSON body of the emulator is read the same way: a bad one is the client's 400, not a 500.
    const badBucket = await fetch(`${emulator.url}/storage/v1/b?project=${PROJECT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{name',
    });
    expect(badBucket.status).toBe(400);
  });
});
