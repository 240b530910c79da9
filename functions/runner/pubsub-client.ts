/**
 * A Pub/Sub client for a job's `credentials` (the same rules as the `gcs` input: a
 * service-account key, of which only `client_email` and `private_key` are used, or a
 * file for `sluice job run`), and the short name of a topic or subscription in its
 * project. A full name (`projects/P/topics/T`) names its project; a short one belongs to
 * the key's project, else to `PUBSUB_PROJECT_ID` / `GOOGLE_CLOUD_PROJECT`. With
 * `PUBSUB_EMULATOR_HOST` set, the client talks to the emulator.
 *
 * @example
 *   const { pubsub, name } = await pubsubFor(config.credentials, config.topic, 'topics');
 *   pubsub.topic(name);
 */
import type { ClientConfig, PubSub } from '@google-cloud/pubsub';
import { parseServiceAccountKey } from '../../shared/job/inputs/gcs-credentials.ts';

/** The key or file of a job's credentials block (`gcs` input, `pubsub` output). */
interface KeySources {
  'service-account'?: { path?: string; key?: string };
  'application-credentials'?: { path?: string; key?: string };
}

export async function pubsubFor(
  credentials: KeySources | undefined,
  resource: string,
  kind: 'topics' | 'subscriptions',
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ pubsub: PubSub; name: string }> {
  const { PubSub } = await import('@google-cloud/pubsub');
  const options: ClientConfig = {};
  const source = credentials?.['service-account'] ?? credentials?.['application-credentials'];
  let keyProject: string | undefined;
  if (source?.key !== undefined) {
    const parsed = parseServiceAccountKey(source.key);
    if (!parsed.ok) throw new Error(parsed.message);
    options.credentials = { client_email: parsed.key.client_email, private_key: parsed.key.private_key };
    keyProject = parsed.key.project_id;
  } else if (source?.path) options.keyFilename = source.path;
  const full = new RegExp(`^projects/([^/]+)/${kind}/(.+)$`).exec(resource);
  const project = full?.[1] ?? keyProject ?? env.PUBSUB_PROJECT_ID ?? env.GOOGLE_CLOUD_PROJECT;
  const singular = kind.slice(0, -1);
  if (!project)
    throw new Error(
      `${singular} ${resource} has no project: write projects/<project>/${kind}/${resource}, or use a key with project_id`,
    );
  options.projectId = project;
  return { pubsub: new PubSub(options), name: full?.[2] ?? resource };
}
