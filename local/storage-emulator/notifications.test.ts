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
