/**
 * Topics and subscriptions made when missing, for the channels the code sets up itself
 * (on the emulator, which starts empty; the API's per-worker subscriptions in the cloud).
 * A concurrent creator that wins the race is as good as creating it.
 *
 * @example
 *   await ensureTopic(pubsub, 'sluice-runs');
 *   await ensureSubscription(pubsub, 'sluice-runs', 'sluice-runs-runner', { ackDeadlineSeconds: 10 });
 */
import type { CreateSubscriptionOptions, PubSub } from '@google-cloud/pubsub';

export async function ensureTopic(pubsub: PubSub, name: string): Promise<void> {
  const [exists] = await pubsub.topic(name).exists();
  if (!exists) await ignoringExists(() => pubsub.createTopic(name));
}

export async function ensureSubscription(
  pubsub: PubSub,
  topic: string,
  name: string,
  options: CreateSubscriptionOptions,
): Promise<void> {
  const [exists] = await pubsub.subscription(name).exists();
  if (!exists) await ignoringExists(() => pubsub.topic(topic).createSubscription(name, options));
}

async function ignoringExists(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if ((err as { code?: number }).code !== 6) throw err; // ALREADY_EXISTS: a concurrent creator won
  }
}
