/**
 * No field of the job language is silently ignored (issue 17, behaviour 5). The walk takes
 * every leaf field from the JSON Schema (generated from the zod declarations, so a field
 * added tomorrow is walked tomorrow) and needs a proof for each:
 *
 * - `read`: the code that runs the job reads it. Each component is built and run once from a
 *   definition that sets every field, with the definition wrapped in a proxy that records
 *   the fields read (the gcs plan and its storage client options, the http-poll input, the
 *   triggers on a fake clock, the action chain, each output writing one event);
 * - `refused`: a value the code would not honour is refused by validation, naming the field.
 *
 * A walked field with neither proof fails the test with its path and what to add.
 */

import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compileActionChain } from '../../functions/runner/actions/chain.ts';
import { storageOptions } from '../../functions/runner/inputs/gcs/client.ts';
import { planGcsInput } from '../../functions/runner/inputs/gcs/config.ts';
import { createHttpPollInput } from '../../functions/runner/inputs/http-poll/index.ts';
import { createFileOutput } from '../../functions/runner/outputs/file/index.ts';
import { createGcsOutput } from '../../functions/runner/outputs/gcs/index.ts';
import { createHttpPostOutput } from '../../functions/runner/outputs/http-post/index.ts';
import { topicFor } from '../../functions/runner/outputs/pubsub/client.ts';
import { createPubsubOutput } from '../../functions/runner/outputs/pubsub/index.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runOnTrigger } from '../../functions/runner/triggers.ts';
import { newOutputMetrics, type RunEvent, type RunReport } from '../../functions/runner/types.ts';
import { startStorageEmulator } from '../../local/storage-emulator/index.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import { jobJsonSchema } from '../../shared/job/json-schema.ts';
import { validateJob } from '../../shared/job/validate.ts';
import { memoryWatermarks } from '../gcs/helpers.ts';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; items?: Schema };

/** Every leaf field of the job language, as `input.gcs.retry.timeout`, `actions[].filter`. */
function leafFields(schema: Schema, path = '', out = new Set<string>()): Set<string> {
  const alternatives = [...((schema.anyOf as Schema[]) ?? []), ...((schema.oneOf as Schema[]) ?? [])];
  let inner = false;
  // A component without options (print, discard) has no field to ignore.
  if (schema.properties && !Object.keys(schema.properties).length) return out;
  if (schema.properties) {
    inner = true;
    for (const [key, value] of Object.entries(schema.properties))
      leafFields(value, path ? `${path}.${key}` : key, out);
  }
  if (schema.items && typeof schema.items === 'object' && (schema.items.properties || schema.items.anyOf)) {
    inner = true;
    leafFields(schema.items, `${path}[]`, out);
  }
  for (const alternative of alternatives) {
    if (alternative.properties || alternative.anyOf || alternative.oneOf) {
      inner = true;
      leafFields(alternative, path, out);
    }
  }
  if (!inner && path) out.add(path);
  return out;
}

/** A proxy that records the path of every field read through it. */
function recorded<T>(value: T, path: string, reads: Set<string>): T {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value as object, {
    get(target, key, receiver) {
      const inner = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || !Object.hasOwn(target, key)) return inner;
      const at = Array.isArray(target) ? path : `${path}.${key}`;
      reads.add(at);
      return recorded(inner, Array.isArray(inner) ? at : at, reads);
    },
    has(target, key) {
      if (typeof key === 'string') reads.add(`${path}.${key}`);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      reads.add(path);
      return Reflect.ownKeys(target);
    },
  }) as T;
}

function rendered(input: Record<string, unknown>, output: Record<string, unknown>, actions?: unknown[]) {
  const result = validateJob(
    { name: 'walk', input, output, ...(actions ? { actions } : {}) },
    { level: 'rendered' },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.job;
}

/** A syntactically valid service-account key (never used to reach Google). */
const KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'walk-project',
  client_email: 'walk@walk-project.iam.gserviceaccount.com',
  private_key: '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n',
});

const reads = new Set<string>();
/** What the exercised components reported: a failed exercise would prove nothing. */
const reports: RunReport[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  let flaky = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // The first request to /flaky fails, so that a retry happens.
      if (req.url === '/flaky' && flaky++ === 0) {
        res.statusCode = 503;
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => {
  server.close();
});

const run = { job: 'walk', worker: 'w', report: (r: RunReport) => void reports.push(r) };
const event: RunEvent = { a: 1, time: '2026-11-20T10:00:00Z' } as unknown as RunEvent;

async function exerciseGcsInput() {
  const job = rendered(
    {
      gcs: {
        'bucket-name': 'walk-bucket',
        'object-names': ['x/'],
        credentials: { 'storage-url': 'gs://walk-bucket', 'service-account': { key: KEY } },
        'payload-mode': 'json',
        mode: 'list-objects',
        'ignore-linebreaks': true,
        'timestamp-mode': { 'object-name-pattern': '^(?P<Y>\\d{4})(?P<m>\\d{2})(?P<d>\\d{2})' },
        'maximum-age': { value: '1d' },
        'include-regex': ['a'],
        'exclude-regex': ['b'],
        'object-name-field': 'o',
        'creation-time-field': 'c',
        'last-modified-field': 'l',
        'content-length-field': 'n',
        'content-type-field': 't',
        'etag-field': 'e',
        'data-field': 'd',
        preprocessors: ['gzip'],
        fingerprinting: true,
        'maximum-fingerprint-age': '2d',
        retry: { timeout: '10s', retries: 2 },
        notifications: { subscription: 'uploads', backfill: true },
        ordered: true,
      },
    },
    { discard: {} },
  );
  const gcs = recorded(job.input.gcs!, 'input.gcs', reads);
  planGcsInput(gcs);
  storageOptions(gcs.credentials, {});
  for (const mode of [{ 'last-modified': {} }, 'last-modified', 'none']) {
    const variant = rendered(
      {
        gcs: {
          'bucket-name': 'walk-bucket',
          'object-names': ['x/'],
          credentials: { 'storage-url': 'gs://walk-bucket' },
          'timestamp-mode': mode,
        },
      },
      { discard: {} },
    );
    planGcsInput(recorded(variant.input.gcs!, 'input.gcs', reads));
  }
  for (const source of [
    { 'application-credentials': { path: '/k.json' } },
    { 'service-account': { path: '/k.json' } },
    { 'application-credentials': { key: KEY } },
  ]) {
    const variant = rendered(
      {
        gcs: {
          'bucket-name': 'walk-bucket',
          'object-names': ['x/'],
          credentials: { 'storage-url': 'gs://walk-bucket', ...source },
        },
      },
      { discard: {} },
    );
    storageOptions(recorded(variant.input.gcs!, 'input.gcs', reads).credentials, {});
  }
}

async function exerciseHttpPoll() {
  const job = rendered(
    {
      'http-poll': {
        url,
        method: 'POST',
        headers: { 'x-walk': '1' },
        body: '{}',
        json: true,
        timeout: '5s',
        'max-response-size': '1MiB',
      },
    },
    { discard: {} },
  );
  const input = createHttpPollInput(recorded(job.input['http-poll']!, 'input.http-poll', reads));
  await input.run(
    {
      ...run,
      signal: new AbortController().signal,
      ...fileStores(mkdtempSync(join(tmpdir(), 'walk-'))),
    },
    async () => {},
  );
}

/** Runs a trigger on a fake clock until its first run (or `limit`), recording what it reads. */
async function exerciseTrigger(trigger: Record<string, unknown>, kind: 'gcs' | 'http-poll') {
  const job = rendered(
    kind === 'gcs' ? { gcs: { ...windowedGcs, trigger } } : { 'http-poll': { url, trigger } },
    {
      discard: {},
    },
  );
  const input = (job.input.gcs ?? job.input['http-poll'])!;
  const controller = new AbortController();
  // In memory: no file I/O runs behind the fake clock's back, whatever the machine's load.
  const watermarks = memoryWatermarks();
  const listeners = new Set<(m: SluiceEvent) => void>();
  vi.useFakeTimers({ now: Date.parse('2026-11-20T10:00:00.300Z') });
  try {
    let finished = false;
    const done = runOnTrigger(
      recorded(input.trigger!, `input.${kind}.trigger`, reads),
      async () => controller.abort(),
      {
        job: 'walk',
        signal: controller.signal,
        watermarks,
        messages: {
          subscribe(listener) {
            listeners.add(listener);
            return () => listeners.delete(listener);
          },
        },
      },
    ).finally(() => {
      finished = true;
    });
    for (let step = 0; !finished && step < 800; step++) {
      for (const listener of listeners)
        listener({
          id: 'm',
          type: 'user-generated',
          kind: 'user',
          source: 'server',
          worker: 'w',
          job: 'j',
          tags: ['t'],
          time: new Date().toISOString(),
          payload: {},
        });
      await vi.advanceTimersByTimeAsync(100);
    }
    controller.abort();
    await done;
  } finally {
    vi.useRealTimers();
  }
}

async function exerciseTriggers() {
  const start = {
    'start-time': { 'start-time': '2026-11-20 08:00:00.000 +0000', 'highwatermark-file': 'hw' },
  };
  for (const kind of ['gcs', 'http-poll'] as const) {
    await exerciseTrigger(
      {
        message: {
          limit: 1,
          'filter-kind': 'user',
          'filter-source': ['server'],
          'filter-worker': 'w',
          'filter-job': 'j',
          'filter-type': ['user-generated'],
          'filter-tag': 't',
        },
      },
      kind,
    );
    // http-poll refuses a window (REFUSED below): it has no time range to ask for.
    const windows =
      kind === 'gcs'
        ? [start, { tracked: 'walk-position' }].map((windowStart) => ({
            window: { size: '1h', offset: '1m', start: windowStart },
          }))
        : [{}];
    for (const window of windows) {
      await exerciseTrigger(
        { cron: { cron: '* * * * * *', immediate: true, 'random-offset': '1s', ...window } },
        kind,
      );
      await exerciseTrigger({ interval: { duration: '1s', 'random-offset': '1s', ...window } }, kind);
    }
  }
}

function exerciseActions() {
  const job = rendered({ 'http-poll': { url } }, { discard: {} }, [
    { filter: 'true' },
    { set: { b: 'event.a + 1' } },
    { remove: ['c'] },
    { rename: { a: 'z' } },
    { keep: ['z', 'b', 'j', 't'] },
    { 'parse-json': 'j' },
    { 'parse-timestamp': { field: 't', format: '%Y-%m-%d' } },
  ]);
  const chain = compileActionChain(recorded(job.actions!, 'actions[]', reads));
  chain.bind({ job: 'walk', worker: 'w' });
  chain.apply({ a: 1, c: 2, j: '{"x":1}', t: '2026-11-20' } as unknown as RunEvent);
}

async function exerciseOutputs() {
  const dir = mkdtempSync(join(tmpdir(), 'walk-out-'));
  const file = rendered(
    { 'http-poll': { url } },
    { file: { path: join(dir, 'out.ndjson'), 'max-file-size': '1MiB' } },
  );
  const fileOut = createFileOutput(
    recorded(file.output.file!, 'output.file', reads),
    { stored: false },
    newOutputMetrics(),
  );
  await fileOut.write([event]);
  await fileOut.acknowledge?.();
  await fileOut.close();

  const post = rendered(
    { 'http-poll': { url } },
    {
      'http-post': {
        url: `${url}flaky`,
        headers: { 'x-walk': '1' },
        format: 'ndjson',
        gzip: true,
        'max-bytes': '1MiB',
        'max-events': 10,
        'max-age': '1s',
        timeout: '5s',
        retries: 1,
      },
    },
  );
  const postOut = createHttpPostOutput(recorded(post.output['http-post']!, 'output.http-post', reads), {
    report: (r) => reports.push(r),
    metrics: newOutputMetrics(),
    baseDelayMs: 1,
  });
  await postOut.write([event]);
  await postOut.acknowledge?.();
  await postOut.close();

  const storage = await startStorageEmulator({ port: 0 });
  try {
    const { Storage } = await import('@google-cloud/storage');
    const client = new Storage({ apiEndpoint: storage.url, projectId: 'walk' });
    await client.createBucket('walk-out');
    const gcs = rendered(
      { 'http-poll': { url } },
      {
        gcs: {
          'bucket-name': 'walk-out',
          credentials: { 'service-account': { key: KEY } },
          'object-name': 'x/{part}.ndjson.gz',
          format: 'ndjson',
          compression: 'gzip',
          'max-bytes': '1MiB',
          'max-events': 10,
          'max-age': '1s',
          'content-type': 'application/x-ndjson',
          'time-field': 'time',
        },
      },
    );
    const gcsConfig = recorded(gcs.output.gcs!, 'output.gcs', reads);
    // Its own client, as a job gets it: the emulator stands in for Google (STORAGE_EMULATOR_HOST).
    const before = process.env.STORAGE_EMULATOR_HOST;
    process.env.STORAGE_EMULATOR_HOST = storage.url;
    try {
      const gcsOut = createGcsOutput(gcsConfig, {
        report: (r) => reports.push(r),
        metrics: newOutputMetrics(),
      });
      await gcsOut.write([event]);
      await gcsOut.acknowledge?.();
      await gcsOut.close();
    } finally {
      if (before === undefined) delete process.env.STORAGE_EMULATOR_HOST;
      else process.env.STORAGE_EMULATOR_HOST = before;
    }
    const [written] = await client.bucket('walk-out').getFiles();
    expect(written.length).toBe(1);
    storageOptions(gcsConfig.credentials as never, {});
    for (const credentials of [
      { 'application-credentials': { path: '/k.json' } },
      { 'service-account': { path: '/k.json' } },
      { 'application-credentials': { key: KEY } },
    ]) {
      const job = rendered(
        { 'http-poll': { url } },
        { gcs: { 'bucket-name': 'walk-out', 'object-name': 'x/{part}', credentials } },
      );
      storageOptions(recorded(job.output.gcs!, 'output.gcs', reads).credentials as never, {});
    }
  } finally {
    await storage.stop();
  }

  const pubsub = new PubSub({ projectId: 'walk-project' });
  const [topic] = await pubsub.createTopic(`walk-${Date.now()}`);
  const pub = rendered(
    { 'http-poll': { url } },
    {
      pubsub: {
        topic: topic.name,
        credentials: { 'service-account': { key: KEY } },
        attributes: { a: 'b' },
        'ordering-key': 'a',
        batching: { 'max-messages': 10, 'max-bytes': '1MiB', 'max-latency': '10ms' },
      },
    },
  );
  const pubConfig = recorded(pub.output.pubsub!, 'output.pubsub', reads);
  const pubOut = createPubsubOutput(pubConfig, {
    report: (r) => reports.push(r),
    metrics: newOutputMetrics(),
    topic,
  });
  await pubOut.write([event]);
  await pubOut.acknowledge?.();
  await pubOut.close();
  for (const credentials of [
    { 'service-account': { key: KEY } },
    { 'application-credentials': { key: KEY } },
    { 'service-account': { path: '/k.json' } },
    { 'application-credentials': { path: '/k.json' } },
  ]) {
    const job = rendered(
      { 'http-poll': { url } },
      { pubsub: { topic: 'projects/walk-project/topics/walk-topic', credentials } },
    );
    await topicFor(recorded(job.output.pubsub!, 'output.pubsub', reads), {}, {}).catch(() => {});
  }
  await pubsub.close();
}

/** A gcs input that takes a trigger `window` (it needs object timestamps to compare). */
const windowedGcs = {
  'bucket-name': 'walk-bucket',
  'object-names': ['x/'],
  credentials: { 'storage-url': 'gs://walk-bucket' },
  'timestamp-mode': 'last-modified',
};

/** Refused proofs: the value a field would be ignored with, and the problem validation names. */
const storageUrlJob = (storageUrl: string) => ({
  name: 'walk',
  input: {
    gcs: { 'bucket-name': 'a-bucket', 'object-names': ['x/'], credentials: { 'storage-url': storageUrl } },
  },
  output: { discard: {} },
});

/**
 * Fields the runtime does not read, proven by refusal: every value it would not honour is
 * refused by validation, naming the field. storage-url repeats bucket-name (the seed has the
 * bucket twice): another bucket, or a path (which would not narrow the listing), is refused.
 */
const REFUSED: Record<string, { definitions: Record<string, unknown>[]; problem: RegExp }> = {
  'input.gcs.credentials.storage-url': {
    definitions: [storageUrlJob('gs://a-bucket/some/path'), storageUrlJob('gs://another-bucket')],
    problem: /credentials\.storage-url/,
  },
  ...httpPollWindowRefused(),
};

/**
 * An http-poll request has no time range to ask for, so a trigger `window` there (every
 * field of it) is refused, at the window's path, rather than sending one request per window.
 */
function httpPollWindowRefused() {
  const proofs: typeof REFUSED = {};
  const window = { size: '1h', offset: '1m' };
  const starts = [
    { 'start-time': { 'start-time': '2026-11-20 08:00:00.000 +0000', 'highwatermark-file': 'hw' } },
    { tracked: 'walk-position' },
  ];
  for (const schedule of ['interval', 'cron'] as const) {
    const beat = schedule === 'interval' ? { duration: '1s' } : { cron: '* * * * *' };
    const definitions = [window, ...starts.map((start) => ({ ...window, start }))].map((w) => ({
      name: 'walk',
      input: {
        'http-poll': { url: 'https://example.org/', trigger: { [schedule]: { ...beat, window: w } } },
      },
      output: { discard: {} },
    }));
    for (const field of [
      'size',
      'offset',
      'start.start-time.start-time',
      'start.start-time.highwatermark-file',
      'start.tracked',
    ])
      proofs[`input.http-poll.trigger.${schedule}.window.${field}`] = {
        definitions,
        problem: new RegExp(`^input\\.http-poll\\.trigger\\.${schedule}\\.window$`),
      };
  }
  return proofs;
}

describe('the job language has no silently ignored field', () => {
  it('reads every field when it runs a job, or refuses the value it would ignore', async () => {
    await exerciseGcsInput();
    await exerciseHttpPoll();
    await exerciseTriggers();
    exerciseActions();
    await exerciseOutputs();

    const refused = new Set<string>();
    for (const [field, proof] of Object.entries(REFUSED)) {
      const results = proof.definitions.map((definition) => validateJob(definition, { level: 'saved' }));
      if (results.every((r) => !r.ok && r.errors.some((e) => proof.problem.test(e.path)))) refused.add(field);
    }

    const fields = [...leafFields(jobJsonSchema() as Schema)];
    // The top level is the job itself: its name names runs, and context is rendered in before anything runs.
    // Empty maps (print, discard, timestamp-mode none) have no field. An array is read when its items are: `include-regex[]` is proven by reading `include-regex`.
    const proven = (field: string) =>
      reads.has(field) || reads.has(field.replace(/\[\]$/, '')) || refused.has(field);
    const unproven = fields.filter((field) => !['name', 'context'].includes(field) && !proven(field));
    expect(fields.length).toBeGreaterThan(100);
    expect(reports.filter((r) => r.type === 'job-errors' || r.type === 'run-job-failure')).toEqual([]);
    expect(
      unproven.map(
        (field) => `${field}: neither read when a job runs nor refused (add a read or a REFUSED proof)`,
      ),
    ).toEqual([]);
  }, 60_000);
});
