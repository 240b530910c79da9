/**
 * The `cloud` worker's run queue on Pub/Sub: the tick publishes run requests to
 * `sluice-runs`; runners take them from `sluice-runs-runner` (a push subscription to the
 * runner function in the cloud, a pull by the local stack's runner processes). A request
 * a runner failed five times goes to `sluice-runs-dead-letters`, whose subscription
 * `sluice-runs-dead-letters-runner` reaches the same runners, which report it.
 * terraform/runs.tf creates all four in the cloud; `ensureRunChannel` creates them on the
 * emulator, with the same dead-letter policy.
 *
 * @example
 *   await ensureRunChannel(pubsub);
 *   await publishRunRequests(pubsub, [{ tenant, job, version, requested_ms, reason: 'due' }]);
 */
import type { PubSub } from '@google-cloud/pubsub';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { ensureSubscription, ensureTopic } from '../adapters/pubsub-resources.ts';

export const RUN_TOPIC = 'sluice-runs';
export const RUN_SUBSCRIPTION = 'sluice-runs-runner';
export const RUN_DEAD_LETTER_TOPIC = 'sluice-runs-dead-letters';
export const RUN_DEAD_LETTER_SUBSCRIPTION = 'sluice-runs-dead-letters-runner';
/** Deliveries of a request that fail (an error answer, or a runner that died) before it is dead-lettered. */
export const RUN_MAX_DELIVERY_ATTEMPTS = 5;
/**
 * How long Pub/Sub waits for a pulling runner before it delivers a request again. The pull
 * client extends it while a request is in hand, so only a runner that died lets it expire:
 * short, so its requests come back soon. (The cloud's push subscription waits for the
 * runner function's answer instead: its deadline is above the longest run, terraform/runs.tf.)
 */
export const RUN_ACK_DEADLINE_SECONDS = 10;

const ensured = new WeakMap<PubSub, Promise<void>>();

/** How the runners' subscriptions are made on the emulator (pulled; they never expire). */
const PULLED = { ackDeadlineSeconds: RUN_ACK_DEADLINE_SECONDS, expirationPolicy: {} };

/**
 * The topics and subscriptions, on the emulator (once per client). In the cloud terraform
 * made them, and the identities that publish and pull may not even read their settings.
 */
export function ensureRunChannel(pubsub: PubSub): Promise<void> {
  if (!pubsub.isEmulator) return Promise.resolve();
  let done = ensured.get(pubsub);
  if (!done) {
    done = createRunChannel(pubsub);
    done.catch(() => ensured.delete(pubsub));
    ensured.set(pubsub, done);
  }
  return done;
}

async function createRunChannel(pubsub: PubSub): Promise<void> {
  await Promise.all([RUN_TOPIC, RUN_DEAD_LETTER_TOPIC].map((name) => ensureTopic(pubsub, name)));
  await Promise.all([
    ensureSubscription(pubsub, RUN_DEAD_LETTER_TOPIC, RUN_DEAD_LETTER_SUBSCRIPTION, PULLED),
    ensureSubscription(pubsub, RUN_TOPIC, RUN_SUBSCRIPTION, {
      ...PULLED,
      deadLetterPolicy: {
        deadLetterTopic: pubsub.topic(RUN_DEAD_LETTER_TOPIC).name,
        maxDeliveryAttempts: RUN_MAX_DELIVERY_ATTEMPTS,
      },
    }),
  ]);
}

export async function publishRunRequests(pubsub: PubSub, requests: RunRequest[]): Promise<void> {
  if (requests.length === 0) return;
  await ensureRunChannel(pubsub);
  const topic = pubsub.topic(RUN_TOPIC, { batching: { maxMessages: 500, maxMilliseconds: 5 } });
  await Promise.all(
    requests.map((request) =>
      topic.publishMessage({ json: request, attributes: { tenant: request.tenant, job: request.job } }),
    ),
  );
}
