/**
 * Issue 19: runner processes (the local stack's, `local/runners.ts`) killed with SIGKILL
 * mid-run, 10 times at seeded random moments from the first line printed on: every line
 * is still printed, and only objects that were in flight when a runner died are printed
 * twice: each such object was printed by a runner that was killed, and no killed runner
 * leaves more objects to print again than it can hold unfingerprinted. The test is the
 * tick (it publishes run requests every 300 ms, as the scheduled function does every minute).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BATCH_EVENTS } from '../../functions/runner/inputs/gcs/delivery.ts';
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
/** Lines per object: a batch of events holds a few objects (the window a kill can hit). */
const LINES = 250;
const KILLS = 10;
/** Objects a run reads at once (the gcs input's default); a runner takes two requests at once. */
const READING = 4;
const RUNS_PER_RUNNER = 2;
/**
 * What one killed runner may leave to be printed again, per run it held: the objects being
 * read, whose first lines may be out, and those of the last batch printed and not
 * fingerprinted yet (committed before the next batch goes out): the ones it holds whole and
 * one whose last lines begin it.
 */
const IN_FLIGHT_PER_KILL = RUNS_PER_RUNNER * (READING + Math.ceil(BATCH_EVENTS / LINES) + 1);

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

  /** Times each line was printed, and which runner processes printed each object's lines. */
  const seen = new Map<string, number>();
  const printers = new Map<string, Set<number>>();
  // A runner killed mid-write leaves a line cut short; another's output never continues it.
  const partial = new Map<number, string>();
  const print = (chunk: Buffer, pid: number) => {
    const lines = ((partial.get(pid) ?? '') + chunk.toString()).split('\n');
    partial.set(pid, lines.pop()!);
    for (const line of lines) {
      const m = /^\{"j":(\d+),"o":(\d+),"l":(\d+)\}$/.exec(line);
      if (!m) continue;
      const key = `${m[1]}/${m[2]}/${m[3]}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const object = `${m[1]}/${m[2]}`;
      printers.set(object, (printers.get(object) ?? new Set()).add(pid));
    }
  };
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
  const killed: number[] = [];
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
      killed.push(victim.pid);
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
  expect(seen.size, replay).toBe(total);
  const objectsTwice = new Set(
    [...seen].filter(([, n]) => n > 1).map(([key]) => key.split('/').slice(0, 2).join('/')),
  );
  // Each object printed twice was in flight in a runner that was killed, and counts against it.
  const leftBy = new Map<number, string[]>();
  for (const object of objectsTwice) {
    const by = killed.find((pid) => printers.get(object)!.has(pid));
    expect(
      by,
      `${object} printed twice, by runners ${[...printers.get(object)!]} none killed (${replay})`,
    ).toBeDefined();
    leftBy.set(by!, [...(leftBy.get(by!) ?? []), object]);
  }
  for (const [pid, objects] of leftBy) {
    expect(objects.length, `runner ${pid} left ${objects} (${replay})`).toBeLessThanOrEqual(
      IN_FLIGHT_PER_KILL,
    );
  }
  // The kills did cut runs short: some runs started and never ended.
  const count = async (type: string) =>
    (await json(await t.request(`/api/events?type=${type}&worker=cloud&limit=1000`, { headers: admin })))
      .events.length as number;
  expect(await count('job-run-started'), replay).toBeGreaterThan(await count('job-run-ended'));
}, 180_000);
