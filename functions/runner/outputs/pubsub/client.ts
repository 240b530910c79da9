/**
 * The Pub/Sub topic of one `pubsub` output, from the job's `credentials` (the same rules
 * as the `gcs` input: a service-account key, of which only `client_email` and
 * `private_key` are used, or a file for `sluice job run`). With `PUBSUB_EMULATOR_HOST`
 * set, the client talks to the emulator. A short topic name belongs to the key's project,
 * else to `PUBSUB_PROJECT_ID` / `GOOGLE_CLOUD_PROJECT`.
 *
 * @example
 *   const { topic, close } = await topicFor(config, { batching: { maxMessages: 100 } });
 */
import type { PublishOptions, PubSub, Topic } from '@google-cloud/pubsub';
import type { PubsubOutput } from '../../../../shared/job/schema.ts';
import { pubsubFor } from '../../pubsub-client.ts';

export async function topicFor(
  config: PubsubOutput,
  publishOptions: PublishOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ topic: Topic; pubsub: PubSub }> {
  const { pubsub, name } = await pubsubFor(config.credentials, config.topic, 'topics', env);
  return { topic: pubsub.topic(name, publishOptions), pubsub };
}
