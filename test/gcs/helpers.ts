/**
 * Test harness for the `gcs` input: the project's Cloud Storage emulator, a client for
 * it, in-memory stores, and `runInput` that collects delivered events and reports.
 *
 * @example
 *   const env = await gcsTestEnv();
 *   await env.put('logs/a.json', '{"a":1}\n');
 *   const { events } = await env.run({ 'object-names': [] });
 */
import { randomUUID } from 'node:crypto';
import type { PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { ReadPool } from '../../functions/runner/cores/read-pool.ts';
import { createGcsInput, type GcsInputOptions } from '../../functions/runner/inputs/gcs/index.ts';
import type {
  FingerprintStore,
  JsonLines,
  RunEvent,
  RunReport,
  RunWindow,
  ShardControl,
  WatermarkStore,
} from '../../functions/runner/types.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import type { GcsInput } from '../../shared/job/index.ts';
import { validateJob } from '../../shared/job/index.ts';

export interface GcsTestEnv {
  emulator: StorageEmulator;
  storage: Storage;
  bucket: string;
  put(name: string, data: string | Buffer, metadata?: Record<string, unknown>): Promise<void>;
  run(fields: Record<string, unknown>, options?: RunOptions): Promise<RunResult>;
  stop(): Promise<void>;
}

export interface RunOptions extends GcsInputOptions {
  fingerprints?: FingerprintStore;
  watermarks?: WatermarkStore;
  window?: RunWindow;
  signal?: AbortSignal;
  job?: string;
  deliver?: (events: RunEvent[]) => Promise<void>;
  /** Take delivery as JSON lines (as `print` does), parsed back into `events`. */
  asJsonLines?: boolean;
  /** With `asJsonLines`: told after each delivery, with the events it held. */
  afterDelivery?: (count: number) => void;
  /** As the `cloud` worker's runners give it (functions/runs/shards.ts). */
  shards?: ShardControl;
}

export interface RunResult {
  events: RunEvent[];
  /** With `asJsonLines`: the JSON lines as delivered. */
  jsonText: string;
  reports: RunReport[];
  ended: Record<string, unknown>;
}

export async function gcsTestEnv(bucket = 'test-bucket'): Promise<GcsTestEnv> {
  const emulator = await startStorageEmulator({ port: 0 });
  const storage = new Storage({
    apiEndpoint: emulator.url,
    projectId: 'demo-gcs',
    retryOptions: { autoRetry: false },
  });
  await storage.createBucket(bucket);
  const env: GcsTestEnv = {
    emulator,
    storage,
    bucket,
    async put(name, data, metadata = {}) {
      const save = () => storage.bucket(env.bucket).file(name).save(data, { resumable: false, metadata });
      // Set-up, not the subject: an upload whose connection was dropped under a loaded CI
      // machine (`socket hang up`, once in a full run) is sent again, once; an answer that
      // refuses it is not (the client's own retries are off, so that the input's show).
      await save().catch((err: { message?: string; code?: string }) => {
        if (!/socket hang up|ECONNRESET/.test(`${err.code ?? ''} ${err.message ?? ''}`)) throw err;
        return save();
      });
    },
    async run(fields, options = {}) {
      const input = gcsJob(env.bucket, fields);
      const gcs = createGcsInput(input, { storage, baseDelayMs: 5, ...options });
      const events: RunEvent[] = [];
      const reports: RunReport[] = [];
      let jsonText = '';
      await gcs.run(
        {
          job: options.job ?? 'job-a',
          worker: 'test',
          signal: options.signal ?? new AbortController().signal,
          ...(options.window ? { window: options.window } : {}),
          fingerprints: options.fingerprints ?? memoryFingerprints(),
          watermarks: options.watermarks ?? memoryWatermarks(),
          report: (r) => reports.push(r),
          ...(options.shards ? { shards: options.shards } : {}),
          ...(options.asJsonLines
            ? {
                deliverJsonLines: async (lines: JsonLines) => {
                  const text = Buffer.concat(lines.chunks).toString();
                  jsonText += text;
                  const parsed = text
                    .split('\n')
                    .slice(0, -1)
                    .map((line) => JSON.parse(line) as RunEvent);
                  if (parsed.length !== lines.count)
                    throw new Error(`count ${lines.count} for ${parsed.length} lines`);
                  events.push(...parsed);
                  options.afterDelivery?.(lines.count);
                },
              }
            : {}),
        },
        options.deliver ??
          (async (batch) => {
            events.push(...batch);
          }),
      );
      const ended = (reports.find((r) => r.type === 'job-run-ended')?.payload ?? {}) as Record<
        string,
        unknown
      >;
      return { events, reports, ended, jsonText };
    },
    async stop() {
      await emulator.stop();
    },
  };
  return env;
}

/** A rendered, validated `gcs` input with the given fields over the minimal form. */
export function gcsJob(bucket: string, fields: Record<string, unknown>): GcsInput {
  const result = validateJob(
    {
      name: 'job-a',
      input: {
        gcs: {
          'bucket-name': bucket,
          credentials: { 'storage-url': `gs://${bucket}` },
          'object-names': [],
          ...fields,
        },
      },
      output: { print: {} },
    },
    { level: 'rendered' },
  );
  if (!result.ok) throw new Error(`invalid test job: ${JSON.stringify(result.errors)}`);
  return result.job.input.gcs!;
}

export function memoryFingerprints(
  now: () => number = Date.now,
): FingerprintStore & { keys: Map<string, number> } {
  const keys = new Map<string, number>();
  return {
    keys,
    async seen(job, list) {
      return new Set(list.filter((k) => (keys.get(`${job}|${k}`) ?? 0) > now()));
    },
    async commit(job, list, maxAgeMs) {
      for (const k of list) keys.set(`${job}|${k}`, now() + maxAgeMs);
    },
  };
}

export function memoryWatermarks(): WatermarkStore {
  const values = new Map<string, string>();
  return {
    async get(job, name) {
      return values.get(`${job}|${name}`);
    },
    async set(job, name, value) {
      values.set(`${job}|${name}`, value);
    },
  };
}

/**
 * A topic, a subscription to it (10 s leases) and the test bucket's notification config to
 * the topic, as `sluice gcs notify` makes them.
 */
export async function notifiedSubscription(env: GcsTestEnv, pubsub: PubSub, project: string) {
  const name = `uploads-${randomUUID().slice(0, 8)}`;
  const [topic] = await pubsub.createTopic(name);
  await topic.createSubscription(name, { ackDeadlineSeconds: 10 });
  await env.storage
    .bucket(env.bucket)
    .createNotification(`projects/${project}/topics/${name}`, { payloadFormat: 'JSON_API_V1' });
  return { topic, subscription: `projects/${project}/subscriptions/${name}` };
}

/** A `gcs` input reading `subscription`'s notifications, fingerprinted, each event naming its object. */
export const notifiedFields = (subscription: string, extra: Record<string, unknown> = {}) => ({
  fingerprinting: true,
  'object-name-field': 'object',
  notifications: { subscription },
  ...extra,
});

/** A read pool that records the objects it is given (which reads went to a thread). */
export class RecordingPool extends ReadPool {
  readNames: string[] = [];
  override read(...args: Parameters<ReadPool['read']>): ReturnType<ReadPool['read']> {
    this.readNames.push(args[0].meta.name);
    return super.read(...args);
  }
}

/** The three ways an object is read: on the main thread as event objects or JSON lines, and on `pool`'s thread. */
export function readWays(pool: ReadPool): [string, RunOptions][] {
  return [
    ['main thread, event objects', { readPool: null }],
    ['main thread, JSON lines', { readPool: null, asJsonLines: true }],
    ['read thread', { readPool: pool, asJsonLines: true }],
  ];
}
