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
import type { ClientConfig, PublishOptions, PubSub, Topic } from '@google-cloud/pubsub';
import { parseServiceAccountKey } from '../../../../shared/job/inputs/gcs-credentials.ts';
import type { PubsubOutput } from '../../../../shared/job/schema.ts';

export async function topicFor(
  config: PubsubOutput,
  publishOptions: PublishOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ topic: Topic; pubsub: PubSub }> {
  const { PubSub } = await import('@google-cloud/pubsub');
  const options: ClientConfig = {};
  const source = config.credentials?.['service-account'] ?? config.credentials?.['application-credentials'];
  let keyProject: string | undefined;
  if (source?.key !== undefined) {
    const parsed = parseServiceAccountKey(source.key);
    if (!parsed.ok) throw new Error(parsed.message);
    options.credentials = { client_email: parsed.key.client_email, private_key: parsed.key.private_key };
    keyProject = parsed.key.project_id;
  } else if (source?.path) options.keyFilename = source.path;
  const full = /^projects\/([^/]+)\/topics\/(.+)$/.exec(config.topic);
  const project = full?.[1] ?? keyProject ?? env.PUBSUB_PROJECT_ID ?? env.GOOGLE_CLOUD_PROJECT;
  if (!project)
    throw new Error(
      `topic ${config.topic} has no project: write projects/<project>/topics/${config.topic}, or use a key with project_id`,
    );
  options.projectId = project;
  const pubsub = new PubSub(options);
  const topic = pubsub.topic(full?.[2] ?? config.topic, publishOptions);
  return { topic, pubsub };
}
