/**
 * Issue 19: runner processes (the local stack's, `local/runners.ts`) killed with SIGKILL
 * mid-run, 10 times at seeded random moments from the first line printed on: every line
 * is still printed, and only objects that were in flight when a runner died are printed
 * twice. The test is the tick (it publishes
 * run requests every 300 ms, as the scheduled function does every minute).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { type Runners, startRunners } from '../../local/runners.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { json } from '../helpers/http.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';
import { until } from '../helpers/until.ts';

const JOBS = 4;
const OBJECTS = 60;
const LINES = 25;
const KILLS = 10;
/** Objects a run reads at once (the gcs input's default) times requests a runner takes at once. */
const IN_FLIGHT_PER_KILL = 4 * 2;

let t: TestApp;
let gcs: StorageEmulator;
let runners: Runners | undefined;

beforeAll(async () => {
  t = await testApp();
  gcs = await startStorageEmulator({ port: 0 });
});
afterAll(async () => {
  await runners?.stop();
  await t.close();
  await gcs.stop();
});

it('runners killed with SIGKILL mid-run lose nothing; only objects in flight are printed twice', async () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const replay = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`;
  const admin = bearer(await bootstrapTestAdmin(t));
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  await storage.createBucket('killed');
  for (let j = 0; j < JOBS; j++) {
    for (let o = 0; o < OBJECTS; o++) {
      const text = Array.from({ length: LINES }, (_, l) => JSON.stringify({ j, o, l })).join('\n');
      await storage.bucket('killed').file(`j${j}/o-${o}.json`).save(`${text}\n`, { resumable: false });
    }
    await deployToCloud(t, admin, `killed-${j}`, cloudGcsYaml(`killed-${j}`, 'killed', `j${j}/`));
  }
  // Reads slower than a real bucket's while the kills come, so that every kill lands
  // mid-run even when restarting runners is slow (a loaded CI machine); fast afterwards.
  gcs.setFaults({ latencyMs: 300 });

  const seen = new Map<string, number>();
  let partial = '';
  const print = new Writable({
    write(chunk, _encoding, done) {
      const text = partial + chunk.toString();
      const lines = text.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const m = /^\{"j":(\d+),"o":(\d+),"l":(\d+)/.exec(line);
        if (m) seen.set(`${m[1]}/${m[2]}/${m[3]}`, (seen.get(`${m[1]}/${m[2]}/${m[3]}`) ?? 0) + 1);
      }
      done();
    },
  });
  // A short budget keeps the request horizon short (2 × budget + 60 s): a request Pub/Sub
  // gave up on (one killed five times) is made again within the wait below.
  const config = { ...t.deps.config, runLease: '2s', cloudRunBudget: '20s' };
  // The runners' debug logs and the kills, kept for a failure's message.
  const logs: string[] = [];
  const logTo = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  runners = await startRunners(
    2,
    config,
    {
      FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST!,
      PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST!,
      STORAGE_EMULATOR_HOST: gcs.url,
      SLUICE_RUNNER_CONCURRENCY: '2',
      SLUICE_LOG_LEVEL: 'debug',
    },
    print,
    logTo,
  );
  let ticking = true;
  const tick = (async () => {
    while (ticking) {
      await dispatchDueRuns({ ...t.deps, config }).catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  const total = JOBS * OBJECTS * LINES;
  try {
    // Kills come at seeded moments from the first line printed on, until 10 or all printed.
    await until(() => seen.size > 0, 30_000, 'the first line printed');
    let kills = 0;
    while (kills < KILLS && seen.size < total) {
      await new Promise((r) => setTimeout(r, 100 + random() * 400));
      const alive = runners.processes();
      if (alive.length === 0) continue;
      const victim = alive[Math.floor(random() * alive.length)]!;
      process.kill(-victim.pid, 'SIGKILL');
      logs.push(`${new Date().toISOString()} test: killed runner ${victim.pid}\n`);
      kills++;
    }
    // A killed runner's requests come back only after their ack deadline: all 10 land mid-way.
    expect(kills, replay).toBe(KILLS);
    gcs.setFaults({ latencyMs: 0 });
    await until(() => seen.size === total, 120_000, `every line printed (${replay})`).catch(async (err) => {
      // What the runs did, so that a failure in CI explains itself.
      const { events } = await json(
        await t.request('/api/events?worker=cloud&limit=1000', { headers: admin }),
      );
      const timeline = (events as { time: string; type: string; job: string; payload: object }[])
        .reverse()
        .map((e) => `${e.time} ${e.type} ${e.job} ${JSON.stringify(e.payload).slice(0, 160)}`);
      throw new Error(
        `${(err as Error).message}; ${seen.size} of ${total} lines printed; events:\n${timeline.join('\n')}\nrunners:\n${logs.join('')}`,
      );
    });
  } finally {
    ticking = false;
    await tick;
  }
  const twice = [...seen].filter(([, n]) => n > 1).map(([key]) => key.split('/').slice(0, 2).join('/'));
  const objectsTwice = new Set(twice);
  expect(seen.size, replay).toBe(total);
  expect(objectsTwice.size, replay).toBeLessThanOrEqual(KILLS * IN_FLIGHT_PER_KILL);
  // The kills did cut runs short: some runs started and never ended.
  const count = async (type: string) =>
    (await json(await t.request(`/api/events?type=${type}&worker=cloud&limit=1000`, { headers: admin })))
      .events.length as number;
  expect(await count('job-run-started'), replay).toBeGreaterThan(await count('job-run-ended'));
}, 180_000);
