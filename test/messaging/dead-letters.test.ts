/**
 * A poison message (one a worker never acknowledges) must not come back for ever: the
 * per-worker subscription carries a dead-letter policy, so after MAX_DELIVERY_ATTEMPTS
 * deliveries Pub/Sub moves it to the dead-letter topic, where an operator can read it.
 * Against Google's Pub/Sub emulator, with the worker's nack made explicit.
 */
import { PubSub, v1 } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEAD_LETTER_TOPIC,
  ensureWorkerSubscription,
  MAX_DELIVERY_ATTEMPTS,
  publishToWorkers,
  workerSubscriptionName,
} from '../../functions/messaging/worker-channel.ts';
import { testProjectId } from '../helpers/app.ts';

const projectId = testProjectId();
const pubsub = new PubSub({ projectId });
const subscriber = new v1.SubscriberClient({
  servicePath: process.env.PUBSUB_EMULATOR_HOST!.split(':')[0],
  port: Number(process.env.PUBSUB_EMULATOR_HOST!.split(':')[1]),
  sslCreds: (await import('@grpc/grpc-js')).credentials.createInsecure(),
  projectId,
});
const HOLD = 'dead-letters-hold';

beforeAll(async () => {
  await ensureWorkerSubscription(pubsub, 'acme', 'w1');
  await pubsub.topic(DEAD_LETTER_TOPIC).createSubscription(HOLD);
});
afterAll(async () => {
  await subscriber.close();
  await pubsub.close();
});

const path = (name: string) => `projects/${projectId}/subscriptions/${name}`;

async function pullOne(subscription: string) {
  for (let i = 0; i < 50; i++) {
    const [answer] = await subscriber.pull({ subscription: path(subscription), maxMessages: 1 });
    const message = answer.receivedMessages?.[0];
    if (message) return message;
  }
  throw new Error(`nothing arrived on ${subscription}`);
}

describe('dead letters', () => {
  it(`moves a message a worker nacks ${MAX_DELIVERY_ATTEMPTS} times to the dead-letter topic`, async () => {
    const [metadata] = await pubsub.subscription(workerSubscriptionName('acme', 'w1')).getMetadata();
    expect(metadata.deadLetterPolicy).toMatchObject({
      deadLetterTopic: `projects/${projectId}/topics/${DEAD_LETTER_TOPIC}`,
      maxDeliveryAttempts: MAX_DELIVERY_ATTEMPTS,
    });

    await publishToWorkers(pubsub, { tenant: 'acme', worker: 'w1' }, { type: 'poison' });
    const worker = workerSubscriptionName('acme', 'w1');
    const attempts: number[] = [];
    for (let i = 0; i < MAX_DELIVERY_ATTEMPTS; i++) {
      const message = await pullOne(worker);
      attempts.push(message.deliveryAttempt ?? 0);
      // The worker fails to handle it: a nack, as an ack deadline passing would be.
      await subscriber.modifyAckDeadline({
        subscription: path(worker),
        ackIds: [message.ackId!],
        ackDeadlineSeconds: 0,
      });
    }
    expect(attempts).toEqual([1, 2, 3, 4, 5]);

    // No sixth delivery: the message goes to the dead-letter topic instead (the emulator
    // moves it when the next delivery would be due, that is at this pull).
    const [sixth] = await subscriber.pull({
      subscription: path(worker),
      maxMessages: 1,
      returnImmediately: true,
    });
    expect(sixth.receivedMessages ?? []).toEqual([]);
    const dead = await pullOne(HOLD);
    expect(JSON.parse(Buffer.from(dead.message!.data as Uint8Array).toString())).toEqual({ type: 'poison' });
    expect(dead.message!.attributes).toMatchObject({ tenant: 'acme', worker: 'w1' });
  }, 60_000);
});
