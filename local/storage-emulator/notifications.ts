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
 * Configs live in memory: a restart of the emulator forgets them, as it would a bucket of
 * an in-memory store.
 *
 * @example
 *   await bucket.createNotification('projects/demo/topics/uploads', { payloadFormat: 'JSON_API_V1' });
 */
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

/** What changed: the object resource (as the JSON API gives it) and the generation it replaced or was replaced by. */
export interface ObjectChange {
  type: NotificationEventType;
  bucket: string;
  object: Record<string, unknown> & { name: string; generation: string };
  overwroteGeneration?: string;
  overwrittenByGeneration?: string;
}

const TOPIC =
  /^(?:\/\/pubsub\.googleapis\.com\/)?(projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/topics\/[A-Za-z][A-Za-z0-9._~%+-]{2,254})$/;

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
  private nextId = 1;

  constructor(
    private readonly publish: Publish = publishToEmulator,
    private readonly onError: (err: unknown) => void = (err) =>
      console.warn(`storage emulator: a notification was not published: ${(err as Error).message}`),
  ) {}

  create(bucket: string, body: Record<string, unknown>, base: string): Record<string, unknown> {
    const topic = TOPIC.exec(String(body.topic ?? ''))?.[1];
    if (!topic)
      throw new NotificationError(
        400,
        'topic must be //pubsub.googleapis.com/projects/{project}/topics/{topic}',
      );
    const payloadFormat = body.payload_format ?? 'JSON_API_V1';
    if (payloadFormat !== 'JSON_API_V1' && payloadFormat !== 'NONE')
      throw new NotificationError(400, 'payload_format must be JSON_API_V1 or NONE');
    const eventTypes = body.event_types as unknown[] | undefined;
    if (eventTypes && !eventTypes.every((t) => (EVENT_TYPES as readonly unknown[]).includes(t)))
      throw new NotificationError(400, `event_types must be among ${EVENT_TYPES.join(', ')}`);
    const config: NotificationConfig = {
      id: String(this.nextId++),
      bucket,
      topic,
      payloadFormat,
      ...(eventTypes?.length ? { eventTypes: eventTypes as NotificationEventType[] } : {}),
      ...(typeof body.object_name_prefix === 'string' ? { objectNamePrefix: body.object_name_prefix } : {}),
      ...(body.custom_attributes
        ? { customAttributes: body.custom_attributes as Record<string, string> }
        : {}),
    };
    this.configs.set(key(bucket, config.id), config);
    return resource(config, base);
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
          eventTime: new Date().toISOString(),
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

/** Publishes through the official client to PUBSUB_EMULATOR_HOST; without one, notifications go nowhere. */
async function publishToEmulator(
  topic: string,
  data: Buffer,
  attributes: Record<string, string>,
): Promise<void> {
  if (!process.env.PUBSUB_EMULATOR_HOST) return;
  client ??= import('@google-cloud/pubsub').then(
    ({ PubSub }) => new PubSub({ projectId: topic.split('/')[1] }),
  );
  await (await client).topic(topic).publishMessage({ data, attributes });
}
