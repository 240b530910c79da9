/**
 * Review F1b: a run (or a part) stopped at its budget had its rest requested again at once,
 * whether or not the attempt got anywhere: a job that cannot make progress within its
 * budget (here an output that never answers) went round for ever, a `job-errors` each time
 * (the reviewer counted 198 `part stopped-at-budget` in 4 minutes). Now the request carries
 * how many attempts in a row stopped without progress (nothing fingerprinted, nothing handed
 * over); at three the rest is not requested again: one `run-job-failure` says what happened
 * and what to do, the deployment shows `failed` with that reason, and the job's trigger (if
 * any) runs it again as usual.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCollection, leasePath } from '../../functions/adapters/firestore-paths.ts';
import { type Deployment, jobsCollection } from '../../functions/jobs/store.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { bucketOfOneLineObjects, cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { json } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let gcs: StorageEmulator;
let admin: Record<string, string>;
/** Takes every request and never answers. */
let silent: Server;
const open = new Set<IncomingMessage>();

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  gcs = await startStorageEmulator({ port: 0 });
  process.env.STORAGE_EMULATOR_HOST = gcs.url;
  silent = createServer((req) => {
    open.add(req);
    req.socket.once('close', () => open.delete(req));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  Object.assign(t.deps.config, { cloudRunBudget: '1s' });
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
  await t.close();
  await gcs.stop();
});

/** A fingerprinting gcs job over `objects` objects whose output never answers. */
async function deployStuck(name: string, objects: number, trigger = ''): Promise<void> {
  await bucketOfOneLineObjects(gcs.url, name, objects);
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
  await deployToCloud(
    t,
    admin,
    name,
    cloudGcsYaml(name, name, 'in/')
      .replace('output:\n  print: {}\n', `output:\n  http-post:\n    url: '${url}'\n`)
      .replace('    fingerprinting: true\n', `    fingerprinting: true\n${trigger}`),
  );
}

const eventsOf = async (type: string, job: string) =>
  (await json(await t.request(`/api/events?type=${type}&job=${job}&limit=1000`, { headers: admin })))
    .events as { payload: Record<string, unknown> }[];
const deploymentOf = async (job: string) =>
  (
    await jobsCollection(await t.deps.clients.firestore(), 'default')
      .doc(job)
      .get()
  ).get('deployments.cloud') as (Deployment & { next_due_ms?: number | null }) | undefined;

describe('a job that cannot make progress within its budget', () => {
  it('is stopped three times in a row, then given up once with the reason; nothing is requested again', async () => {
    const answers: RunAnswer[] = [];
    const runner = await startPullRunner(t.deps, {
      owner: 'stalls',
      concurrency: 2,
      onAnswer: (a) => answers.push(a),
    });
    try {
      await deployStuck('stuck', 1);
      await until(
        async () => (await eventsOf('run-job-failure', 'stuck')).length > 0,
        20_000,
        'the run given up',
      );
      await until(() => answers.length === 3, 5_000, 'the third attempt answered');
      await runner.idle(500);
    } finally {
      await runner.stop();
    }
    expect(answers.map((a) => a.outcome)).toEqual([
      'stopped-at-budget',
      'stopped-at-budget',
      'stopped-at-budget',
    ]);
    const failures = await eventsOf('run-job-failure', 'stuck');
    expect(failures).toHaveLength(1);
    const reason = failures[0]!.payload.reason as string;
    expect(reason).toMatch(/3 times in a row/);
    expect(reason).toMatch(/SLUICE_CLOUD_RUN_BUDGET/);
    expect(reason).toMatch(/fingerprinting/);
    const deployment = await deploymentOf('stuck');
    expect(deployment).toMatchObject({ state: 'failed', error: reason });
    // No trigger: it runs again when deployed again, not before.
    expect(deployment!.next_due_ms).toBeNull();
    expect((await (await t.deps.clients.firestore()).doc(leasePath('default', 'stuck')).get()).exists).toBe(
      false,
    );
  }, 40_000);

  it('with a trigger, is given up until its next time as usual', async () => {
    const runner = await startPullRunner(t.deps, { owner: 'stalls-hourly', concurrency: 2 });
    try {
      await deployStuck('stuck-hourly', 1, '    trigger:\n      interval:\n        duration: 1h\n');
      await until(
        async () => (await eventsOf('run-job-failure', 'stuck-hourly')).length > 0,
        20_000,
        'the run given up',
      );
      await runner.idle(500);
    } finally {
      await runner.stop();
    }
    const deployment = await deploymentOf('stuck-hourly');
    expect(deployment?.state).toBe('failed');
    // An hour after the run given up, not at once (nor never).
    expect(deployment!.next_due_ms).toBeGreaterThan(Date.now() + 55 * 60_000);
    expect(deployment!.next_due_ms).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
  }, 40_000);

  it('read in parts: parts and runs that make no progress end; one report, the deployment failed, nothing left', async () => {
    const answers: RunAnswer[] = [];
    const saved = t.deps.config.shardObjects;
    // The run keeps one object and hands the two others over, one part each.
    t.deps.config.shardObjects = 1;
    // Three runners: a part requested again is taken soon (an idle runner asks once a second).
    const runners = await Promise.all(
      ['p1', 'p2', 'p3'].map((owner) =>
        startPullRunner(t.deps, { owner, concurrency: 2, onAnswer: (a) => answers.push(a) }),
      ),
    );
    const db = await t.deps.clients.firestore();
    try {
      await deployStuck('stuck-parts', 3);
      await until(
        async () => (await eventsOf('run-job-failure', 'stuck-parts')).length > 0,
        40_000,
        'the run given up',
      ).catch((err: Error) => {
        throw new Error(`${err.message}; answers: ${answers.map((a) => a.outcome).join(', ')}`);
      });
      await until(
        async () => (await jobCollection(db, 'default', 'stuck-parts', 'runs').get()).empty,
        5_000,
        'no run document left',
      );
      await Promise.all(runners.map((r) => r.idle(500)));
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      t.deps.config.shardObjects = saved;
    }
    expect(await eventsOf('run-job-failure', 'stuck-parts')).toHaveLength(1);
    const deployment = await deploymentOf('stuck-parts');
    expect(deployment).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/SLUICE_CLOUD_RUN_BUDGET/),
    });
    expect(deployment!.next_due_ms).toBeNull();
    expect((await db.doc(leasePath('default', 'stuck-parts')).get()).exists).toBe(false);
    // Each run that handed parts over ended once, with what its parts did.
    const ended = await eventsOf('job-run-ended', 'stuck-parts');
    expect(ended.length).toBeGreaterThan(0);
    for (const { payload } of ended) expect(payload).toMatchObject({ parts: 2, fingerprinted: 0 });
  }, 60_000);
});
