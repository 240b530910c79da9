/**
 * Pub/Sub notifications of the storage emulator, as Cloud Storage sends them: a bucket's
 * notification configs (`/b/{bucket}/notificationConfigs`), and for each object change a
 * message to each matching config's topic with the attributes Google sets (`eventType`,
 * `bucketId`, `objectId`, `objectGeneration`, `eventTime`, `payloadFormat`,
 * `notificationConfig`, and `overwroteGeneration` / `overwrittenByGeneration`) and, with
 * `JSON_API_V1`, the object resource as the data. Messages go to the Pub/Sub emulator
 * (PUBSUB_EMULATOR_HOST) through the official client, so a subscriber cannot tell them
 * from Google's.
 *
 * As Cloud Storage does, a config is refused when its topic does not exist (checked in the
 * Pub/Sub emulator): a config that loses every message would only be found out later.
 * Configs live in memory: a restart of the emulator forgets them, as it would a bucket of
 * an in-memory store.
 *
 * @example
 *   await bucket.createNotification('projects/demo/topics/uploads', { payloadFormat: 'JSON_API_V1' });
 */
import { z } from 'zod';
import { serviceAgentOf } from './projects.ts';

export const EVENT_TYPES = [
  'OBJECT_FINALIZE',
  'OBJECT_METADATA_UPDATE',
  'OBJECT_DELETE',
  'OBJECT_ARCHIVE',
] as const;
export type NotificationEventType = (typeof EVENT_TYPES)[number];

interface NotificationConfig {
  id: string;
  bucket: string;
  /** `projects/{project}/topics/{topic}`. */
  topic: string;
  payloadFormat: 'JSON_API_V1' | 'NONE';
  eventTypes?: NotificationEventType[];
  objectNamePrefix?: string;
  customAttributes?: Record<string, string>;
}

export type Publish = (topic: string, data: Buffer, attributes: Record<string, string>) => Promise<void>;
/** Whether `projects/{project}/topics/{topic}` exists. */
export type TopicExists = (topic: string) => Promise<boolean>;

/** What changed: the object resource (as the JSON API gives it) and the generation it replaced or was replaced by. */
export interface ObjectChange {
  type: NotificationEventType;
  bucket: string;
  object: Record<string, unknown> & { name: string; generation: string };
  overwroteGeneration?: string;
  overwrittenByGeneration?: string;
}

/**
 * A topic as the API takes it. Any project ID the Pub/Sub emulator takes (`demo`, too);
 * topic names as Pub/Sub allows them.
 */
const TOPIC =
  /^(?:\/\/pubsub\.googleapis\.com\/)?(projects\/[A-Za-z0-9][A-Za-z0-9.:_-]*\/topics\/[A-Za-z][A-Za-z0-9._~%+-]{2,254})$/;

/** A config as `notificationConfigs.insert` takes it (the fields the API defines, typed). */
const ConfigRequest = z.object({
  topic: z
    .string({ error: 'topic is required' })
    .regex(
      TOPIC,
      'topic must be //pubsub.googleapis.com/projects/{project}/topics/{topic}, the topic a letter then 2-254 letters, digits or - _ . ~ + %',
    ),
  payload_format: z.enum(['JSON_API_V1', 'NONE']).default('JSON_API_V1'),
  event_types: z.array(z.enum(EVENT_TYPES)).optional(),
  object_name_prefix: z.string().optional(),
  custom_attributes: z.record(z.string(), z.string()).optional(),
});

const MAX_CONFIGS_PER_EVENT = 10;

export class NotificationError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class Notifications {
  private readonly configs = new Map<string, NotificationConfig>();
  /** When a config first named each topic (for `grantDelayMs`). */
  private readonly firstNamed = new Map<string, number>();
  private nextId = 1;

  constructor(
    private readonly publish: Publish = publishToEmulator,
    private readonly onError: (err: unknown) => void = (err) =>
      console.warn(`storage emulator: a notification was not published: ${(err as Error).message}`),
    private readonly topicExists: TopicExists = topicInEmulator,
  ) {}

  /**
   * `projectNumber`: the bucket's, whose service agent would publish (named in the refusal).
   * `grantDelayMs`: a topic first named this long ago or less is refused as if not yet granted.
   */
  async create(
    bucket: string,
    projectNumber: string,
    body: unknown,
    base: string,
    grantDelayMs = 0,
  ): Promise<Record<string, unknown>> {
    const parsed = ConfigRequest.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.join('.');
      throw new NotificationError(
        400,
        field && field !== 'topic' ? `${field}: ${issue.message}` : issue.message,
      );
    }
    const request = parsed.data;
    const topic = TOPIC.exec(request.topic)![1]!;
    // Cloud Storage's limit: 10 configs that fire on any one event (its 100 a bucket cannot
    // be reached past that, with four events).
    const ofBucket = [...this.configs.values()].filter((c) => c.bucket === bucket);
    for (const event of request.event_types?.length ? request.event_types : EVENT_TYPES) {
      const firing = ofBucket.filter((c) => !c.eventTypes || c.eventTypes.includes(event)).length;
      if (firing >= MAX_CONFIGS_PER_EVENT)
        throw new NotificationError(
          400,
          `bucket ${bucket} has ${MAX_CONFIGS_PER_EVENT} notification configs for ${event}, the most it may have`,
        );
    }
    if (!(await this.topicExists(topic)) || this.notYetGranted(topic, grantDelayMs))
      throw new NotificationError(
        400,
        `Cloud Pub/Sub topic '//pubsub.googleapis.com/${topic}' not found, or user '${serviceAgentOf(projectNumber)}' does not have permission to it.`,
      );
    const config: NotificationConfig = {
      id: String(this.nextId++),
      bucket,
      topic,
      payloadFormat: request.payload_format,
      ...(request.event_types?.length ? { eventTypes: request.event_types } : {}),
      ...(request.object_name_prefix !== undefined ? { objectNamePrefix: request.object_name_prefix } : {}),
      ...(request.custom_attributes ? { customAttributes: request.custom_attributes } : {}),
    };
    this.configs.set(key(bucket, config.id), config);
    return resource(config, base);
  }

  private notYetGranted(topic: string, grantDelayMs: number): boolean {
    if (grantDelayMs <= 0) return false;
    const firstNamed = this.firstNamed.get(topic) ?? Date.now();
    this.firstNamed.set(topic, firstNamed);
    return Date.now() - firstNamed < grantDelayMs;
  }

  list(bucket: string, base: string): Record<string, unknown> {
    const items = [...this.configs.values()].filter((c) => c.bucket === bucket).map((c) => resource(c, base));
    return { kind: 'storage#notifications', items };
  }

  get(bucket: string, id: string, base: string): Record<string, unknown> {
    const config = this.configs.get(key(bucket, id));
    if (!config) throw new NotificationError(404, `No such notification config: ${id}`);
    return resource(config, base);
  }

  delete(bucket: string, id: string): void {
    if (!this.configs.delete(key(bucket, id)))
      throw new NotificationError(404, `No such notification config: ${id}`);
  }

  forgetBucket(bucket: string): void {
    for (const [k, config] of this.configs) if (config.bucket === bucket) this.configs.delete(k);
  }

  /** Publishes the change to every config of its bucket that wants it; failures go to onError. */
  async changed(change: ObjectChange): Promise<void> {
    const wanted = [...this.configs.values()].filter(
      (c) =>
        c.bucket === change.bucket &&
        (!c.eventTypes || c.eventTypes.includes(change.type)) &&
        change.object.name.startsWith(c.objectNamePrefix ?? ''),
    );
    await Promise.all(
      wanted.map(async (config) => {
        const attributes: Record<string, string> = {
          ...config.customAttributes,
          notificationConfig: `projects/_/buckets/${config.bucket}/notificationConfigs/${config.id}`,
          eventType: change.type,
          payloadFormat: config.payloadFormat,
          bucketId: change.bucket,
          objectId: change.object.name,
          objectGeneration: change.object.generation,
          // When the change happened: a finalize or metadata update is the version's own
          // `updated` time, as Cloud Storage gives it; a delete happens now.
          eventTime:
            change.type === 'OBJECT_FINALIZE' || change.type === 'OBJECT_METADATA_UPDATE'
              ? String(change.object.updated ?? new Date().toISOString())
              : new Date().toISOString(),
          ...(change.overwroteGeneration ? { overwroteGeneration: change.overwroteGeneration } : {}),
          ...(change.overwrittenByGeneration
            ? { overwrittenByGeneration: change.overwrittenByGeneration }
            : {}),
        };
        const data =
          config.payloadFormat === 'JSON_API_V1'
            ? Buffer.from(JSON.stringify(change.object))
            : Buffer.alloc(0);
        await this.publish(config.topic, data, attributes).catch(this.onError);
      }),
    );
  }
}

function key(bucket: string, id: string): string {
  return `${bucket}\u0000${id}`;
}

function resource(config: NotificationConfig, base: string): Record<string, unknown> {
  return {
    kind: 'storage#notification',
    id: config.id,
    selfLink: `${base}/storage/v1/b/${config.bucket}/notificationConfigs/${config.id}`,
    topic: `//pubsub.googleapis.com/${config.topic}`,
    payload_format: config.payloadFormat,
    etag: config.id,
    ...(config.eventTypes ? { event_types: config.eventTypes } : {}),
    ...(config.objectNamePrefix ? { object_name_prefix: config.objectNamePrefix } : {}),
    ...(config.customAttributes ? { custom_attributes: config.customAttributes } : {}),
  };
}

let client: Promise<import('@google-cloud/pubsub').PubSub> | undefined;

function emulatorClient(topic: string): Promise<import('@google-cloud/pubsub').PubSub> {
  client ??= import('@google-cloud/pubsub').then(
    ({ PubSub }) => new PubSub({ projectId: topic.split('/')[1] }),
  );
  return client;
}

/** Publishes through the official client to PUBSUB_EMULATOR_HOST; without one, notifications go nowhere. */
async function publishToEmulator(
  topic: string,
  data: Buffer,
  attributes: Record<string, string>,
): Promise<void> {
  if (!process.env.PUBSUB_EMULATOR_HOST) return;
  await (await emulatorClient(topic)).topic(topic).publishMessage({ data, attributes });
}

/** Asks the Pub/Sub emulator; without one there is nothing to ask, and any topic will do. */
async function topicInEmulator(topic: string): Promise<boolean> {
  if (!process.env.PUBSUB_EMULATOR_HOST) return true;
  const [exists] = await (await emulatorClient(topic)).topic(topic).exists();
  return exists;
}
