/**
 * Issue 19: the `cloud` worker's run queue against the real emulators. The tick publishes
 * run requests to Pub/Sub; runners (the pull runner the local stack's processes run, and
 * the runner function that Pub/Sub pushes to in the cloud) take them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runnerFunction } from '../../functions/entry/runner-function.ts';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import {
  ensureRunChannel,
  publishRunRequests,
  RUN_DEAD_LETTER_SUBSCRIPTION,
  RUN_SUBSCRIPTION,
} from '../../functions/runs/run-channel.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let admin: Record<string, string>;
let gcs: StorageEmulator;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  gcs = await startStorageEmulator({ port: 0 });
  process.env.STORAGE_EMULATOR_HOST = gcs.url;
});
afterAll(async () => {
  await t.close();
  await gcs.stop();
});

const deploy = (name: string, yaml: string, headers = admin) => deployToCloud(t, headers, name, yaml);

const gcsYaml = cloudGcsYaml;

async function putObjects(bucket: string, prefix: string, objects: number, lines: number): Promise<void> {
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  const [exists] = await storage.bucket(bucket).exists();
  if (!exists) await storage.createBucket(bucket);
  for (let o = 0; o < objects; o++) {
    const text = Array.from({ length: lines }, (_, l) => JSON.stringify({ p: prefix, o, l })).join('\n');
    await storage.bucket(bucket).file(`${prefix}o-${o}.json`).save(`${text}\n`, { resumable: false });
  }
}

describe('run requests', () => {
  it.each([1, 2, 4])('%i runner(s): six jobs of ten objects, every line printed exactly once', async (n) => {
    const bucket = `many-${n}`;
    for (let j = 0; j < 6; j++) {
      await putObjects(bucket, `j${j}/`, 10, 3);
      await deploy(`${bucket}-${j}`, gcsYaml(`${bucket}-${j}`, bucket, `j${j}/`));
    }
    const out = printed();
    const runners = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        startPullRunner(t.deps, { owner: `${bucket}-${i}`, concurrency: 1, print: out.output }),
      ),
    );
    try {
      await dispatchDueRuns(t.deps);
      await until(() => out.lines().length >= 180, 30_000, 'every line printed');
      await Promise.all(runners.map((r) => r.idle(300)));
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
    }
    const lines = out.lines();
    expect(lines).toHaveLength(180);
    expect(new Set(lines).size).toBe(180);
    for (let j = 0; j < 6; j++)
      await t.request(`/api/jobs/${bucket}-${j}/undeploy`, jsonInit('POST', {}, admin));
  });

  it('a job deployed to cloud is requested at once: it runs without waiting for a tick', async () => {
    await putObjects('at-once', 'x/', 2, 2);
    const out = printed();
    const runner = await startPullRunner(t.deps, { owner: 'at-once', concurrency: 1, print: out.output });
    try {
      await deploy('at-once', gcsYaml('at-once', 'at-once', 'x/'));
      await until(() => out.lines().length === 4, 10_000, 'the deployed job ran');
    } finally {
      await runner.stop();
    }
    // The run recorded when it is due next: the tick has nothing to request.
    expect(await dispatchDueRuns(t.deps)).toEqual([]);
  });

  it('the same request delivered twice at once, to two runners, reads each object once', async () => {
    await putObjects('twice', 'job/', 30, 5);
    await deploy('twice', gcsYaml('twice', 'twice', 'job/'));
    const out = printed();
    const answers: RunAnswer[] = [];
    const runners = await Promise.all(
      ['a', 'b'].map((owner) =>
        startPullRunner(t.deps, {
          owner,
          concurrency: 2,
          print: out.output,
          onAnswer: (a) => answers.push(a),
        }),
      ),
    );
    try {
      gcs.resetStats();
      const request = {
        tenant: 'default',
        job: 'twice',
        version: 1,
        requested_ms: Date.now(),
        reason: 'due' as const,
      };
      await publishRunRequests(await t.deps.clients.pubsub(), [request, request]);
      await until(() => answers.length >= 2, 20_000, 'both deliveries answered');
      await Promise.all(runners.map((r) => r.idle(300)));
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
    }
    expect(answers.map((a) => a.outcome).sort()).toEqual(expect.arrayContaining(['completed']));
    // One run read them; the other found the job leased or already done.
    expect(['leased-elsewhere', 'not-due']).toContain(
      answers.find((a) => a.outcome !== 'completed')?.outcome,
    );
    expect(gcs.stats().download).toBe(30);
    const lines = out.lines();
    expect(lines).toHaveLength(150);
    expect(new Set(lines).size).toBe(150);
  });

  it("a tenant over its cap waits for the next tick; another tenant's due job runs at once", async () => {
    const open = new Set<IncomingMessage>();
    let mostOpen = 0;
    const silent = createServer((req) => {
      open.add(req);
      mostOpen = Math.max(mostOpen, open.size);
      req.socket.once('close', () => open.delete(req));
    });
    let answered = 0;
    const answering = createServer((_req, res) => {
      answered++;
      res.end('{"ok":true}');
    });
    await Promise.all([silent, answering].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
    const busy = bearer(await tokenFor(t, { role: 'operator', tenant: 'cap-busy' }));
    const other = bearer(await tokenFor(t, { role: 'operator', tenant: 'cap-other' }));
    const poll = (name: string, to: string) =>
      `name: ${name}\ninput:\n  http-poll:\n    url: ${to}\n    json: true\noutput:\n  discard: {}\n`;
    for (let i = 0; i < 4; i++) await deploy(`hang-${i}`, poll(`hang-${i}`, url(silent)), busy);
    const config = t.deps.config;
    const saved = { cap: config.tenantRunCap, budget: config.cloudRunBudget };
    config.tenantRunCap = 2;
    config.cloudRunBudget = '3s';
    const answers: RunAnswer[] = [];
    const runner = await startPullRunner(t.deps, {
      owner: 'cap',
      concurrency: 8,
      onAnswer: (a) => answers.push(a),
    });
    try {
      await dispatchDueRuns(t.deps);
      await until(() => open.size === 2, 10_000, "two of the busy tenant's runs under way");
      await until(
        () => answers.filter((a) => a.outcome === 'tenant-at-cap').length === 2,
        10_000,
        'two delayed',
      );
      // The other tenant's job, deployed now, runs on the next tick although the busy tenant's runs hang.
      await deploy('quick', poll('quick', url(answering)), other);
      await dispatchDueRuns(t.deps);
      await until(() => answered === 1, 5_000, "the other tenant's run");
      expect(open.size).toBe(2);
      // The delayed ones were requested again by that tick and wait for a slot: never more than 2 at once.
      await until(
        () => answers.filter((a) => a.result?.outcome === 'stopped-at-budget').length >= 4,
        30_000,
        'every busy run reached its budget',
      );
      expect(mostOpen).toBe(2);
    } finally {
      await runner.stop();
      Object.assign(config, { tenantRunCap: saved.cap, cloudRunBudget: saved.budget });
      silent.closeAllConnections();
      await Promise.all([silent, answering].map((s) => new Promise((r) => s.close(r))));
      await Promise.all(
        [0, 1, 2, 3].map((i) =>
          t.request(`/api/jobs/hang-${i}/undeploy`, jsonInit('POST', { workers: ['cloud'] }, busy)),
        ),
      );
    }
    // Two rounds of 3 s budgets, waits for slots and the ticks between: about 14 s alone.
  }, 60_000);

  it('the runner function answers a push that is no run request with 204 (nothing to retry), one that is JSON but no valid request with 500 (dead-lettered, reported), and runs nothing', async () => {
    const handler = runnerFunction(t.deps);
    const server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const data = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
    try {
      for (const [body, status] of [
        ['not json', 204],
        [JSON.stringify({}), 204],
        // Refused: Pub/Sub offers it again, then dead-letters it (never dropped unseen).
        [JSON.stringify({ message: { data: data({ tenant: 'default', job: 'twice' }) } }), 500],
        [JSON.stringify({ message: { data: 'bm90IGpzb24=' } }), 204],
      ] as const) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        expect(res.status, body).toBe(status);
      }
    } finally {
      server.close();
    }
  });

  it('pushed by Pub/Sub to the runner function: a run that fails every time is retried, dead-lettered and reported once', async () => {
    await deploy('no-bucket', gcsYaml('no-bucket', 'no-such-bucket', 'x/'));
    const calls: string[] = [];
    const handler = runnerFunction(t.deps);
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      calls.push(req.url ?? '');
      void handler(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const pubsub = await t.deps.clients.pubsub();
    await ensureRunChannel(pubsub);
    // The cloud's configuration (terraform/runs.tf): both subscriptions push to the runner.
    for (const name of [RUN_SUBSCRIPTION, RUN_DEAD_LETTER_SUBSCRIPTION])
      await pubsub.subscription(name).modifyPushConfig({ pushEndpoint: endpoint });
    try {
      await dispatchDueRuns(t.deps);
      const failures = async () =>
        (await json(await t.request('/api/events?type=run-job-failure&job=no-bucket', { headers: admin })))
          .events as { payload: { attempts: number; reason: string; error: string } }[];
      await until(async () => (await failures()).length > 0, 30_000, 'the dead-lettered request reported');
      const reported = await failures();
      expect(reported).toHaveLength(1);
      const [failure] = reported;
      expect(failure!.payload.attempts).toBeGreaterThanOrEqual(5);
      // The reason (viewers see it) does not quote the error; `error` (withheld from viewers) does.
      expect(failure!.payload.reason).toMatch(/^the run failed \d+ times and was given up$/);
      expect(failure!.payload.error).toMatch(/bucket does not exist/);
      const errors = await json(
        await t.request('/api/events?type=job-errors&job=no-bucket', { headers: admin }),
      );
      // Each delivery ran and failed; the sixth call is the dead letter.
      expect(errors.events.length).toBeGreaterThanOrEqual(5);
      expect(calls.length).toBeGreaterThanOrEqual(6);
      const job = await json(await t.request('/api/jobs/no-bucket', { headers: admin }));
      expect(job.deployments).toEqual([expect.objectContaining({ worker: 'cloud', state: 'failed' })]);
    } finally {
      for (const name of [RUN_SUBSCRIPTION, RUN_DEAD_LETTER_SUBSCRIPTION])
        await pubsub.subscription(name).modifyPushConfig({});
      server.close();
    }
  });
});
