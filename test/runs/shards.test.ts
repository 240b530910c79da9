/**
 * Issue 19: a `gcs` run on the `cloud` worker that finds more objects than
 * SLUICE_SHARD_OBJECTS hands the rest to other runners as parts; its one `job-run-ended`
 * reports the totals of all parts, and the job's next run reads nothing again.
 */
import { expect, it } from 'vitest';
import { jobCollection } from '../../functions/adapters/firestore-paths.ts';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import { endPart } from '../../functions/runs/shards.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

const OBJECTS = 120;
const LINES = 3;

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('a large listing is read in parts by several runners; one job-run-ended has the totals', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  await storage.createBucket('big');
  await Promise.all(
    Array.from({ length: OBJECTS }, (_, o) =>
      storage
        .bucket('big')
        .file(`in/o-${String(o).padStart(3, '0')}.json`)
        .save(`${Array.from({ length: LINES }, (_, l) => JSON.stringify({ o, l })).join('\n')}\n`, {
          resumable: false,
        }),
    ),
  );
  await deployToCloud(t, admin, 'big', cloudGcsYaml('big', 'big', 'in/'));
  t.deps.config.shardObjects = 25;
  const out = printed();
  const print = out.output;
  const answers: RunAnswer[] = [];
  const runners = await Promise.all(
    ['r1', 'r2'].map((owner) =>
      startPullRunner(t.deps, { owner, concurrency: 2, print, onAnswer: (a) => answers.push(a) }),
    ),
  );
  const ended = async () =>
    (await json(await t.request('/api/events?type=job-run-ended&job=big', { headers: admin }))).events as {
      payload: Record<string, number>;
    }[];
  try {
    gcs.resetStats();
    await dispatchDueRuns(t.deps);
    await until(async () => (await ended()).length > 0, 30_000, 'the run ended');
    const lines = out.lines();
    expect(lines).toHaveLength(OBJECTS * LINES);
    expect(new Set(lines).size).toBe(OBJECTS * LINES);
    // 25 read by the run, 95 in 4 parts (25, 25, 25, 20), each read by whichever runner took it.
    await until(
      () => answers.filter((a) => a.result?.outcome === 'completed').length === 5,
      10_000,
      'the run and its 4 parts answered',
    );
    const [run] = await ended();
    expect(run!.payload).toMatchObject({
      parts: 4,
      shards: 4,
      sharded_objects: 95,
      listed: OBJECTS,
      downloaded: OBJECTS,
      fingerprinted: OBJECTS,
      events: OBJECTS * LINES,
      failed: false,
    });
    expect(gcs.stats().download).toBe(OBJECTS);
    // Its parts done, the job is looked at again on the next tick: nothing new to read.
    answers.length = 0;
    const next = await dispatchDueRuns(t.deps);
    expect(next.map((r) => r.job)).toEqual(['big']);
    await until(() => answers.length === 1, 10_000, 'the next tick answered');
    expect(answers[0]!.outcome).toBe('not-due');
    expect(gcs.stats().download).toBe(OBJECTS);
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
  }
  // 7-15 s alone; its waits allow up to 50 s.
}, 60_000);

it('a part that ends twice (its request delivered again after it was read) counts once', async () => {
  const db = await t.deps.clients.firestore();
  await jobCollection(db, 'default', 'twice-ended', 'runs')
    .doc('r1')
    .set({ pending: 3, parts: 2, started_ms: Date.now() });
  const end = (part: number | 'run') => endPart(db, 'default', 'twice-ended', 'r1', part, { events: 10 });
  expect(await end(0)).toBeUndefined();
  expect(await end(0)).toBeUndefined();
  expect(await end(1)).toBeUndefined();
  expect(await end('run')).toMatchObject({ events: 30, parts: 2 });
  expect((await jobCollection(db, 'default', 'twice-ended', 'runs').doc('r1').get()).exists).toBe(false);
});
