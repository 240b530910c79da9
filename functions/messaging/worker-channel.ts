/**
 * The channel from the control plane to workers: one Pub/Sub topic, and one
 * subscription per worker (`sluice-w.<tenant>.<worker>`), created with the worker.
 *
 * A message carries attributes `tenant` and either `worker` (for one worker) or
 * `audience=all` (for every worker of the tenant). In the cloud each subscription
 * has a filter on those attributes; the emulator ignores filters, so whoever reads a
 * subscription must also check `isForWorker` itself.
 *
 * @example
 *   await ensureWorkerSubscription(pubsub, 'acme', 'w1');
 *   await publishToWorkers(pubsub, { tenant: 'acme', worker: 'w1' }, event);
 */
import type { PubSub } from '@google-cloud/pubsub';
import { ensureSubscription, ensureTopic } from '../adapters/pubsub-resources.ts';

export const WORKER_TOPIC = 'sluice-worker-messages';
/** Where a message goes that a worker failed to acknowledge MAX_DELIVERY_ATTEMPTS times (terraform/pubsub.tf). */
export const DEAD_LETTER_TOPIC = 'sluice-worker-messages-dead-letters';
/**
 * A message a worker cannot handle (it never acknowledges it) would otherwise come back
 * every ack deadline for the whole retention: five tries, then the dead-letter topic.
 */
export const MAX_DELIVERY_ATTEMPTS = 5;

export interface Audience {
  tenant: string;
  /** One worker; absent means every worker of the tenant. */
  worker?: string;
}

export function workerSubscriptionName(tenant: string, workerId: string): string {
  return `sluice-w.${tenant}.${workerId}`;
}

export function subscriptionFilter(tenant: string, workerId: string): string {
  return `attributes.tenant = "${tenant}" AND (attributes.audience = "all" OR attributes.worker = "${workerId}")`;
}

/** The check the subscription filter makes, for readers of emulated subscriptions. */
export function isForWorker(attributes: Record<string, string>, tenant: string, workerId: string): boolean {
  return attributes.tenant === tenant && (attributes.audience === 'all' || attributes.worker === workerId);
}

export function audienceAttributes(audience: Audience): Record<string, string> {
  return audience.worker
    ? { tenant: audience.tenant, worker: audience.worker }
    : { tenant: audience.tenant, audience: 'all' };
}

const ensured = new WeakMap<PubSub, Promise<void>>();

/**
 * The worker topic and its dead-letter topic, on the emulator (which starts empty), once per
 * client. In the cloud terraform made both, and the identities that publish may not read
 * them: asking whether they exist (`topics.get`) was refused there, and no worker could be
 * created and no message sent.
 */
export function ensureWorkerTopic(pubsub: PubSub): Promise<void> {
  if (!pubsub.isEmulator) return Promise.resolve();
  let done = ensured.get(pubsub);
  if (!done) {
    done = (async () => {
      for (const name of [WORKER_TOPIC, DEAD_LETTER_TOPIC]) await ensureTopic(pubsub, name);
    })();
    done.catch(() => ensured.delete(pubsub));
    ensured.set(pubsub, done);
  }
  return done;
}

export async function ensureWorkerSubscription(
  pubsub: PubSub,
  tenant: string,
  workerId: string,
): Promise<void> {
  await ensureWorkerTopic(pubsub);
  await ensureSubscription(pubsub, WORKER_TOPIC, workerSubscriptionName(tenant, workerId), {
    filter: subscriptionFilter(tenant, workerId),
    ackDeadlineSeconds: 30,
    messageRetentionDuration: { seconds: 7 * 24 * 3600 },
    expirationPolicy: {},
    deadLetterPolicy: {
      deadLetterTopic: pubsub.topic(DEAD_LETTER_TOPIC).name,
      maxDeliveryAttempts: MAX_DELIVERY_ATTEMPTS,
    },
  });
}

export async function deleteWorkerSubscription(
  pubsub: PubSub,
  tenant: string,
  workerId: string,
): Promise<void> {
  try {
    await pubsub.subscription(workerSubscriptionName(tenant, workerId)).delete();
  } catch (err) {
    if ((err as { code?: number }).code !== 5) throw err; // NOT_FOUND: already gone
  }
}

export async function publishToWorkers(pubsub: PubSub, audience: Audience, message: object): Promise<string> {
  await ensureWorkerTopic(pubsub);
  return await pubsub
    .topic(WORKER_TOPIC)
    .publishMessage({ json: message, attributes: audienceAttributes(audience) });
}
