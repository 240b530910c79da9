/**
 * Review F4: the runner holding a sharded run killed with SIGKILL after it had requested parts.
 * The job went to the parts only when the run ended, so the dead run's lease lapsed (15 s),
 * the request Pub/Sub delivered again listed the bucket as a new run while the orphaned parts
 * still read (whole parts delivered twice), and the dead run's counter document never
 * reached zero (it counted the run itself): no `job-run-ended`, and the document for ever.
 * Now the parts hold the job from the first part on, the request delivered again resumes the
 * same run (its id comes from the request), ends its share, and the run reports once; the
 * objects the dead runner had not delivered are read by the run's rest, after its parts.
 *
 * The output holds every delivery of the run's own share until the kill (never answered):
 * the run has handed all its parts over and waits on its last delivery when it dies. A line
 * counts as delivered when the output has answered it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobCollection, leasePath } from '../../functions/adapters/firestore-paths.ts';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { type Runners, startRunners } from '../../local/runners.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { json } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';

const OBJECTS = 50;
const LINES = 20;
const SHARD = 10;
const PARTS = (OBJECTS - SHARD) / SHARD;

let t: TestApp;
let gcs: StorageEmulator;
let runners: Runners | undefined;
let output: Server;
/** Times each line was delivered (answered by the output). */
const delivered = new Map<string, number>();
/** While set, deliveries of the run's own share (objects before SHARD) are held, never answered. */
let holding = true;
const held: ServerResponse[] = [];

beforeAll(async () => {
  t = await testApp();
  gcs = await startStorageEmulator({ port: 0 });
  output = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const lines = body.split('\n').filter(Boolean);
      const objects = lines.map((line) => (JSON.parse(line) as { o: number }).o);
      if (holding && objects.some((o) => o < SHARD)) {
        held.push(res);
        return;
      }
      for (const line of lines) delivered.set(line, (delivered.get(line) ?? 0) + 1);
      res.end();
    });
  });
  await new Promise<void>((r) => output.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await runners?.stop();
  output.closeAllConnections();
  await new Promise((r) => output.close(r));
  await t.close();
  await gcs.stop();
});

it('the runner of a sharded run killed after requesting parts: nothing read twice, the run ends once, nothing left', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  const logs: string[] = [];
  // One request per runner: the killed runner holds the run and nothing else.
  // The default lease (15 s): the request comes back (10 s) while the dead run still looks alive.
  const config = { ...t.deps.config, runLease: '15s', cloudRunBudget: '20s', shardObjects: SHARD };
  // The bucket filled while the runners start.
  const seeded = (async () => {
    await storage.createBucket('killed-parts');
    await Promise.all(
      Array.from({ length: OBJECTS }, (_, o) =>
        storage
          .bucket('killed-parts')
          .file(`in/o-${String(o).padStart(2, '0')}.json`)
          .save(`${Array.from({ length: LINES }, (_, l) => JSON.stringify({ o, l })).join('\n')}\n`, {
            resumable: false,
          }),
      ),
    );
  })();
  runners = await startRunners(
    2,
    config,
    {
      FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST!,
      PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST!,
      STORAGE_EMULATOR_HOST: gcs.url,
      SLUICE_RUNNER_CONCURRENCY: '1',
      SLUICE_LOG_LEVEL: 'debug',
    },
    () => {},
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(chunk.toString());
        done();
      },
    }),
  );
  await seeded;
  const runDocs = async () => (await jobCollection(db, 'default', 'killed-parts', 'runs').get()).docs;
  const ended = async () =>
    (
      (await json(await t.request('/api/events?type=job-run-ended&job=killed-parts', { headers: admin })))
        .events as { payload: Record<string, unknown> }[]
    ).map((e) => e.payload);
  let ticking = true;
  const tick = (async () => {
    while (ticking) {
      await dispatchDueRuns({ ...t.deps, config }).catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  const url = `http://127.0.0.1:${(output.address() as AddressInfo).port}/`;
  // One delivery at the end of each run or part (every line of it).
  const yaml = cloudGcsYaml('killed-parts', 'killed-parts', 'in/').replace(
    'output:\n  print: {}\n',
    `output:\n  http-post:\n    url: '${url}'\n    max-events: 1000\n    max-age: 60s\n`,
  );
  try {
    await deployToCloud(t, admin, 'killed-parts', yaml);
    // The run's runner: the lease's owner is `<host>.<pid>.<run>` until the parts hold the job.
    let owner = '';
    await until(
      async () => {
        owner = ((await db.doc(leasePath('default', 'killed-parts')).get()).get('owner') as string) ?? '';
        return owner !== '';
      },
      20_000,
      'the run holding the job',
    );
    expect(owner, 'the run, not yet its parts, holds the job').not.toMatch(/^parts:/);
    const pid = Number(owner.split('.').at(-2));
    // Its process group (the watchdog that started it leads it).
    const group = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
    // Its parts all requested, the run waits on the delivery of its own share.
    await until(() => held.length > 0, 15_000, "the run's own delivery");
    const [run] = await runDocs();
    expect(run?.get('parts')).toBe(PARTS);
    expect(run?.get('ended') ?? []).not.toContain('run');
    process.kill(-group, 'SIGKILL');
    holding = false;
    await until(
      async () => (await ended()).some((p) => p.parts !== undefined),
      45_000,
      'the killed run ended (job-run-ended with its parts)',
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; ${delivered.size} lines delivered; runners:\n${logs.join('').slice(-6_000)}`,
      );
    });
    // The rest reports after its last delivery is answered: waiting for the lines alone raced it.
    await until(
      async () =>
        delivered.size === OBJECTS * LINES &&
        (await runDocs()).length === 0 &&
        (await ended()).some((p) => p.parts === undefined),
      15_000,
      "every line delivered, the run's rest ended and no run document left",
    );
  } finally {
    ticking = false;
    await tick;
  }
  const twice = [...delivered].filter(([, n]) => n > 1).map(([line]) => line);
  expect(twice, 'lines delivered more than once').toEqual([]);
  const sharded = (await ended()).filter((p) => p.parts !== undefined);
  expect(sharded, 'the killed run reported once').toHaveLength(1);
  // What its parts read; the dead run's own share did not complete.
  expect(sharded[0]).toMatchObject({ parts: PARTS, aborted: true, fingerprinted: OBJECTS - SHARD });
  // The run's rest read its own share afterwards.
  expect((await ended()).filter((p) => p.parts === undefined)).toEqual([
    expect.objectContaining({ fingerprinted: SHARD }),
  ]);
  // The state is recorded a moment after the report.
  const deployments = async () =>
    (await json(await t.request('/api/jobs/killed-parts', { headers: admin }))).deployments as {
      state: string;
    }[];
  await until(
    async () => (await deployments())[0]?.state === 'stopped',
    10_000,
    'the deployment stopped',
  ).catch(() => {});
  expect(await deployments()).toEqual([expect.objectContaining({ worker: 'cloud', state: 'stopped' })]);
}, 100_000);
