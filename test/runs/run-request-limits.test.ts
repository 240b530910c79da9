/**
 * What one part request may carry (review finding): SLUICE_SHARD_OBJECTS is bounded by the
 * objects a part request may hold (PART_MAX_OBJECTS), a part's size by PART_MAX_BYTES (well
 * under Pub/Sub's 10 MB, base64 in a push included), and a message that is JSON but no valid
 * run request (a part of too many objects) is not acknowledged and dropped: the runners
 * refuse it, Pub/Sub dead-letters it after its delivery attempts, and the dead-letter path
 * reports it on its job, so a part of a run still ends that run (`failed_parts`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCollection } from '../../functions/adapters/firestore-paths.ts';
import { loadConfig, SHARD_OBJECTS_MAX } from '../../functions/app/config.ts';
import { runnerFunction } from '../../functions/entry/runner-function.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import {
  RUN_DEAD_LETTER_SUBSCRIPTION,
  RUN_MAX_DELIVERY_ATTEMPTS,
  RUN_SUBSCRIPTION,
  RUN_TOPIC,
} from '../../functions/runs/run-channel.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { PART_MAX_BYTES, PART_MAX_OBJECTS, parseRunRequest } from '../../shared/runs/run-request.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { json } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';

/** Pub/Sub's largest message (data and attributes): 10 MB. */
const PUBSUB_MAX_MESSAGE_BYTES = 10_000_000;

const partRequest = (job: string, run: string, objects: number) => ({
  tenant: 'default',
  job,
  version: 1,
  requested_ms: Date.now(),
  reason: 'part' as const,
  part: {
    run,
    index: 0,
    objects: Array.from({ length: objects }, (_, i) => ({ bucket: 'limits', name: `in/o-${i}.json` })),
  },
});

describe('SLUICE_SHARD_OBJECTS and what a part request carries', () => {
  it('refuses SLUICE_SHARD_OBJECTS outside 1 to 5000 at start, naming the variable and the range', () => {
    for (const value of ['0', '5001', '10001', '999999', '-1', '1e3', 'many'])
      expect(() => loadConfig({ SLUICE_SHARD_OBJECTS: value }), value).toThrow(
        `SLUICE_SHARD_OBJECTS must be a whole number from 1 to 5000, got "${value}"`,
      );
    expect(loadConfig({ SLUICE_SHARD_OBJECTS: '1' }).shardObjects).toBe(1);
    expect(loadConfig({ SLUICE_SHARD_OBJECTS: '5000' }).shardObjects).toBe(5000);
    expect(loadConfig({}).shardObjects).toBe(1000);
  });

  it('exports the limits a part must keep, consistent with the configuration bound', () => {
    expect(PART_MAX_OBJECTS).toBe(5000);
    expect(SHARD_OBJECTS_MAX).toBe(PART_MAX_OBJECTS);
    expect(loadConfig({ SLUICE_SHARD_OBJECTS: String(PART_MAX_OBJECTS) }).shardObjects).toBe(
      PART_MAX_OBJECTS,
    );
    expect(() => loadConfig({ SLUICE_SHARD_OBJECTS: String(PART_MAX_OBJECTS + 1) })).toThrow(
      /SLUICE_SHARD_OBJECTS/,
    );
    // The schema takes a part of exactly PART_MAX_OBJECTS objects, and not one more.
    expect(parseRunRequest(JSON.stringify(partRequest('j', 'r', PART_MAX_OBJECTS))).ok).toBe(true);
    expect(parseRunRequest(JSON.stringify(partRequest('j', 'r', PART_MAX_OBJECTS + 1)))).toEqual({
      ok: false,
      error: 'part.objects: Too big: expected array to have <=5000 items',
    });
    // A part's serialized size: well under Pub/Sub's 10 MB, even as a push (base64 in JSON).
    expect(Number.isInteger(PART_MAX_BYTES)).toBe(true);
    expect(PART_MAX_BYTES).toBeLessThanOrEqual(PUBSUB_MAX_MESSAGE_BYTES / 2);
    expect(Math.ceil(PART_MAX_BYTES / 3) * 4 + 64 * 1024).toBeLessThan(PUBSUB_MAX_MESSAGE_BYTES);
    // The default SLUICE_SHARD_OBJECTS (1,000) fits even with the longest object names GCS
    // allows (1,024 bytes, here every byte escaped in JSON): only larger settings need the
    // cut by size. 5,000 such objects do not fit: a part is cut by both limits.
    const worst = (objects: number) => {
      const part = partRequest('j', 'r', objects);
      part.part.objects = part.part.objects.map(() => ({
        bucket: 'b'.repeat(222),
        name: '"'.repeat(1024),
        generation: '1712345678901234',
        size: 1_000_000_000,
        contentType: 'application/x-ndjson; charset=utf-8',
        contentEncoding: 'gzip',
        timeCreated: '2026-01-01T00:00:00.000Z',
        updated: '2026-01-01T00:00:00.000Z',
        etag: 'CJKm2bXv+4QDEAE=',
      })) as never;
      return Buffer.byteLength(JSON.stringify(part));
    };
    expect(worst(1000)).toBeLessThan(PART_MAX_BYTES);
    expect(worst(PART_MAX_OBJECTS)).toBeGreaterThan(PART_MAX_BYTES);
  });
});

describe('a run request that is JSON but no valid request', () => {
  let t: TestApp;
  let gcs: StorageEmulator;
  let admin: Record<string, string>;

  beforeAll(async () => {
    t = await testApp();
    gcs = await startStorageEmulator({ port: 0 });
    process.env.STORAGE_EMULATOR_HOST = gcs.url;
    admin = bearer(await bootstrapTestAdmin(t));
    const { Storage } = await import('@google-cloud/storage');
    await new Storage({ apiEndpoint: gcs.url, projectId: 'demo' }).createBucket('limits');
    // Deployed (their first runs, requested at once, read the empty bucket): a dead-lettered
    // request is reported on a deployed job only.
    for (const job of ['too-big', 'too-big-pushed'])
      await deployToCloud(t, admin, job, cloudGcsYaml(job, 'limits', 'in/'));
  });
  afterAll(async () => {
    await t.close();
    await gcs.stop();
  });

  const events = async (type: string, job: string) =>
    (await json(await t.request(`/api/events?type=${type}&job=${job}`, { headers: admin }))).events as {
      payload: Record<string, unknown>;
    }[];
  /** A run whose own reading ended, waiting for its one part. */
  const runWaitingForItsPart = async (job: string, run: string) => {
    const db = await t.deps.clients.firestore();
    await jobCollection(db, 'default', job, 'runs')
      .doc(run)
      .set({ pending: 1, parts: 1, started_ms: Date.now(), ended: ['run'], totals: { listed: 1 } });
  };
  /** The `job-run-ended` of the run that waited for its part (the jobs' first runs had none). */
  const partRunEnded = async (job: string) =>
    (await events('job-run-ended', job)).filter((e) => e.payload.parts === 1);
  const warnings = (text: string) =>
    t
      .logs()
      .split('\n')
      .filter((line) => line.includes('"level":"warn"') && line.includes(text));

  it('the pull runner refuses it (not acknowledged and dropped): dead-lettered, it is reported and its run ends', async () => {
    await runWaitingForItsPart('too-big', 'run-too-big');
    const runner = await startPullRunner(t.deps, { owner: 'limits', concurrency: 2 });
    try {
      // Published as a runner of a deployment with shard_objects above the limit would have.
      const pubsub = await t.deps.clients.pubsub();
      await pubsub.topic(RUN_TOPIC).publishMessage({ json: partRequest('too-big', 'run-too-big', 10_001) });
      await until(async () => (await partRunEnded('too-big')).length > 0, 40_000, "the part's run ended");
      const [ended] = await partRunEnded('too-big');
      expect(ended!.payload).toMatchObject({ failed: true, failed_parts: 1, parts: 1, listed: 1 });
      const failures = await events('run-job-failure', 'too-big');
      expect(failures).toHaveLength(1);
      expect(failures[0]!.payload.attempts).toBeGreaterThanOrEqual(RUN_MAX_DELIVERY_ATTEMPTS);
      // Each delivery was refused with its reason, as a warning; then the dead letter.
      expect(warnings('part.objects: Too big').length).toBeGreaterThanOrEqual(RUN_MAX_DELIVERY_ATTEMPTS + 1);
      expect(warnings('not a valid run request; refused').length).toBeGreaterThanOrEqual(
        RUN_MAX_DELIVERY_ATTEMPTS,
      );
      expect(warnings('dead-lettered').join('\n')).toContain('"job":"too-big"');
    } finally {
      await runner.stop();
    }
  }, 60_000);

  it('the runner function answers 500 to its push (Pub/Sub delivers again, then dead-letters it); the dead letter is reported', async () => {
    await runWaitingForItsPart('too-big-pushed', 'run-pushed');
    const handler = runnerFunction(t.deps);
    const server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const push = (data: string, subscription: string, attributes: Record<string, string> = {}) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          message: { data: Buffer.from(data).toString('base64'), messageId: 'm-1', attributes },
          subscription: `projects/demo/subscriptions/${subscription}`,
        }),
      });
    const invalid = JSON.stringify(partRequest('too-big-pushed', 'run-pushed', 10_001));
    try {
      expect((await push(invalid, RUN_SUBSCRIPTION)).status).toBe(500);
      expect(warnings('not a valid run request; refused').join('\n')).toContain('part.objects: Too big');
      // Not JSON at all: nothing names a job, nothing to retry: dropped, with a warning.
      expect((await push('not json', RUN_SUBSCRIPTION)).status).toBe(204);
      expect(warnings('not a run request; dropped').join('\n')).toContain('not JSON');
      expect(await partRunEnded('too-big-pushed')).toEqual([]);

      // Pub/Sub gave up on it: the dead-letter subscription pushes it to the same function.
      const dead = await push(invalid, RUN_DEAD_LETTER_SUBSCRIPTION, {
        CloudPubSubDeadLetterSourceDeliveryCount: '5',
      });
      expect(dead.status).toBe(204);
      const [ended] = await partRunEnded('too-big-pushed');
      expect(ended?.payload).toMatchObject({ failed: true, failed_parts: 1, parts: 1 });
      const failures = await events('run-job-failure', 'too-big-pushed');
      expect(failures.map((f) => f.payload.attempts)).toEqual([5]);
    } finally {
      server.close();
    }
  });
});
