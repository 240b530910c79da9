/**
 * Issue 20: on the `cloud` worker, a `gcs` job that reads notifications without a trigger
 * is woken by them, for real: the storage emulator publishes each new object's notification
 * to the Pub/Sub emulator; the topic's wake subscription (made by `sluice gcs notify --wake`,
 * cli/gcs-notify.ts) pushes it to the runner function, which requests a run through the run
 * queue; a pull runner takes the request, and the run reads every notification waiting.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpBucketNotifications } from '../../cli/gcs-notify.ts';
import { leasePath } from '../../functions/adapters/firestore-paths.ts';
import { runnerFunction } from '../../functions/entry/runner-function.ts';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { releaseParkedRuns } from '../../functions/runs/parked-runs.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import { handleRunRequest, type RunAnswer } from '../../functions/runs/runner.ts';
import { takeRunSlot } from '../../functions/runs/tenant-slots.ts';
import { handleNotificationWake } from '../../functions/runs/wake.ts';
import type { TestApp } from '../helpers/app.ts';
import { cloudGcsYaml, deployToCloud, wokenGcsYaml } from '../helpers/cloud-jobs.ts';
import { type NotifiedEnv, notifiedEnv } from '../helpers/notified-env.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

const PROJECT = 'demo-wake';
let env: NotifiedEnv;
let t: TestApp;
let admin: Record<string, string>;
let storage: Storage;
let pubsub: PubSub;
let server: Server;
let runnerUrl: string;
/** The paths the runner function was called on. */
const calls: string[] = [];

beforeAll(async () => {
  env = await notifiedEnv(PROJECT);
  ({ t, admin, storage, pubsub } = env);
  const handler = runnerFunction(t.deps);
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    calls.push(req.url ?? '');
    void handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  runnerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await env.close();
});

/** A bucket with notifications to a job subscription and a wake subscription; returns the job's subscription. */
async function notifiedBucket(bucket: string, job: string, wake = true): Promise<string> {
  await storage.createBucket(bucket);
  const setup = await setUpBucketNotifications(
    {
      bucket,
      name: `sluice-gcs-${job}-${randomUUID().slice(0, 6)}`,
      project: PROJECT,
      ...(wake ? { wake: { runnerUrl, tenant: 'default', job } } : {}),
    },
    { storage, pubsub },
  );
  return setup.subscription;
}

/** The `object` of each event printed so far. */
const objectsOf = (out: ReturnType<typeof printed>) =>
  out.lines().map((line) => (JSON.parse(line) as { object: string }).object);

const put = (bucket: string, name: string) =>
  storage.bucket(bucket).file(name).save('{"v":1}\n', { resumable: false });

describe('notifications wake a job without a trigger on the cloud worker', () => {
  it('each batch of notifications wakes one run that reads them all; every object is printed once', async () => {
    const bucket = `wake-${randomUUID().slice(0, 8)}`;
    const subscription = await notifiedBucket(bucket, 'woken');
    await put(bucket, 'in/before.json');
    const out = printed();
    const answers: RunAnswer[] = [];
    const runner = await startPullRunner(t.deps, {
      owner: 'wake-runner',
      concurrency: 1,
      print: out.output,
      onAnswer: (a) => answers.push(a),
    });
    try {
      // Deployed without a trigger: accepted, and its first run lists what was there (backfill).
      await deployToCloud(t, admin, 'woken', wokenGcsYaml('woken', bucket, 'in/', subscription));
      await until(() => objectsOf(out).includes('in/before.json'), 20_000, 'the first run');
      await runner.idle(500);
      // The run ended (quiet) and left nothing for the tick: only notifications wake it now.
      expect(await dispatchDueRuns(t.deps)).toEqual([]);
      const runsBefore = answers.filter((a) => a.outcome === 'completed').length;

      const names = Array.from({ length: 12 }, (_, i) => `in/${String(i).padStart(2, '0')}.json`);
      await Promise.all(names.map((name) => put(bucket, name)));
      await until(
        () => names.every((name) => objectsOf(out).includes(name)),
        60_000,
        'every new object printed',
      );
      await runner.idle(500);
      expect(objectsOf(out).sort()).toEqual(['in/before.json', ...names].sort());
      expect(calls.filter((path) => path.startsWith('/wake?')).length).toBeGreaterThanOrEqual(names.length);
      // Twelve notifications, far fewer runs: the first wake requests one, the others find it requested.
      const woken = answers.filter((a) => a.outcome === 'completed').length - runsBefore;
      expect(woken).toBeGreaterThanOrEqual(1);
      expect(woken).toBeLessThan(names.length / 2);

      // Quiet again; a later object wakes it again.
      await put(bucket, 'in/later.json');
      await until(() => objectsOf(out).includes('in/later.json'), 30_000, 'the later object');
      expect(objectsOf(out).filter((o) => o === 'in/later.json')).toHaveLength(1);
      // Between runs it waits for notifications: idle, not stopped.
      const state = async () =>
        (
          (await (await t.request('/api/jobs/woken', { headers: admin })).json()) as {
            deployments: { state: string }[];
          }
        ).deployments[0]?.state;
      await until(async () => (await state()) === 'idle', 10_000, 'the deployment idle');
    } finally {
      await runner.stop();
    }
  }, 120_000);

  it("at its tenant's cap, a woken run is parked until a slot is free (no tick would request it again)", async () => {
    const bucket = `wake-${randomUUID().slice(0, 8)}`;
    const subscription = await notifiedBucket(bucket, 'capped', false);
    await deployToCloud(t, admin, 'capped', wokenGcsYaml('capped', bucket, 'in/', subscription));
    const db = await t.deps.clients.firestore();
    const config = t.deps.config;
    const savedCap = config.tenantRunCap;
    config.tenantRunCap = 1;
    // Another run holds the tenant's one slot.
    const another = await takeRunSlot(db, 'default', 'another-run', { cap: 1, untilMs: Date.now() + 60_000 });
    expect(another).toBeDefined();
    const parked = () => db.collection('tenants/default/parked-runs').where('job', '==', 'capped').get();
    try {
      const answer = await handleRunRequest(
        t.deps,
        { tenant: 'default', job: 'capped', version: 1, requested_ms: Date.now(), reason: 'notified' },
        { owner: 'capped-runner', print: printed().output },
      );
      expect(answer).toMatchObject({ ack: true, outcome: 'tenant-at-cap' });
      expect((await parked()).size).toBe(1);
      // The tick finds no free slot: it stays parked.
      expect(await releaseParkedRuns(t.deps)).toBe(0);
      await another!.free();
      // A slot free, the tick sends it back to the queue.
      expect(await releaseParkedRuns(t.deps)).toBe(1);
      expect((await parked()).size).toBe(0);
    } finally {
      await another!.free();
      config.tenantRunCap = savedCap;
    }
  }, 60_000);

  it('a wake while the job runs is answered "later"; one for a job that is not woken by notifications does nothing', async () => {
    const bucket = `wake-${randomUUID().slice(0, 8)}`;
    const subscription = await notifiedBucket(bucket, 'held', false);
    await deployToCloud(t, admin, 'held', wokenGcsYaml('held', bucket, 'in/', subscription));
    await deployToCloud(t, admin, 'plain', cloudGcsYaml('plain', bucket, 'x/'));
    const db = await t.deps.clients.firestore();
    const lease = db.doc(leasePath('default', 'held'));
    // As if a runner held the job.
    await lease.set({ owner: 'elsewhere', expires_at_ms: Date.now() + 60_000 });
    try {
      expect(await handleNotificationWake(t.deps, { tenant: 'default', job: 'held' })).toEqual({
        ack: false,
        decision: 'running',
      });
    } finally {
      await lease.delete();
    }
    expect(await handleNotificationWake(t.deps, { tenant: 'default', job: 'plain' })).toEqual({
      ack: true,
      decision: 'not-woken',
    });
    expect(await handleNotificationWake(t.deps, { tenant: 'default', job: 'missing' })).toEqual({
      ack: true,
      decision: 'not-woken',
    });
    // A push that names no job, or names one with a path in it (an attempt to point the
    // job's document elsewhere), is dropped with 204 (nothing to retry) and runs nothing.
    const nextDue = async () =>
      (await db.doc('tenants/default/jobs/held').get()).get('deployments.cloud.next_due_ms');
    const before = await nextDue();
    for (const query of [
      'tenant=default',
      'tenant=default&job=held%2Fleases%2Fscheduled',
      'tenant=a%2Fb&job=held',
    ]) {
      const response = await fetch(`${runnerUrl}/wake?${query}`, {
        method: 'POST',
        body: JSON.stringify({ message: { data: '' } }),
      });
      expect(response.status, query).toBe(204);
    }
    // Nothing was requested: a request moves the job's next due time.
    expect(await nextDue()).toBe(before);
  });
});
