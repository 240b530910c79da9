/**
 * In the cloud, terraform makes the worker topic and its dead-letter topic, and the
 * identities that publish to them may not read them (no `pubsub.topics.get`). The worker
 * channel asked whether both topics existed before every subscription and every message, so
 * there creating a worker answered 500 (its key lost) and no message reached a worker.
 * Here a real client against the Pub/Sub emulator is told it is not on the emulator, and
 * reading a topic is refused as the cloud refuses it.
 */
import { PubSub, Topic } from '@google-cloud/pubsub';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  DEAD_LETTER_TOPIC,
  ensureWorkerSubscription,
  publishToWorkers,
  WORKER_TOPIC,
  workerSubscriptionName,
} from '../../functions/messaging/worker-channel.ts';
import { testProjectId } from '../helpers/app.ts';

const projectId = testProjectId();
const pubsub = new PubSub({ projectId });

beforeAll(async () => {
  // What terraform creates.
  for (const name of [WORKER_TOPIC, DEAD_LETTER_TOPIC]) await pubsub.createTopic(name);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await pubsub.close();
});

it('creates a worker subscription and publishes without reading the topics', async () => {
  const denied = Object.assign(
    new Error('7 PERMISSION_DENIED: User not authorized to perform this action.'),
    {
      code: 7,
    },
  );
  const reads = vi.spyOn(Topic.prototype, 'exists').mockRejectedValue(denied);
  vi.spyOn(Topic.prototype, 'getMetadata').mockRejectedValue(denied);
  const cloud = Object.assign(Object.create(pubsub) as PubSub, { isEmulator: false });

  await ensureWorkerSubscription(cloud, 'acme', 'edge-1');
  await publishToWorkers(cloud, { tenant: 'acme', worker: 'edge-1' }, { type: 'context-changed' });

  expect(reads).not.toHaveBeenCalled();
  const [messages] = await pubsub.subscription(workerSubscriptionName('acme', 'edge-1')).get();
  const received = await new Promise<string>((resolve, reject) => {
    messages.once('message', (m) => {
      m.ack();
      resolve(m.data.toString());
    });
    messages.once('error', reject);
  });
  await messages.close();
  expect(JSON.parse(received)).toEqual({ type: 'context-changed' });
});
