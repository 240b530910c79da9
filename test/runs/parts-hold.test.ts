/**
 * Review F3: the parts of a sharded run hold the job for as long as any of them is pending.
 * The hold was given once, until the request horizon (2 x budget + 60 s), and never renewed:
 * parts that took longer (many parts, a busy tenant) lost it, and the job's next run listed
 * the bucket and handed out again every object the old parts had not read yet, while they
 * still read them (a reviewer saw three sets of 59 parts at once and objects delivered twice).
 *
 * The horizon is made 1 s here (it is at least a minute otherwise), far shorter than the
 * parts take (a slow bucket; a part fingerprints its objects when it ends); the job runs
 * every second, is deployed again while its parts are read (that request finds the job held
 * and has the tick look again when the hold ends), and the tick runs every 250 ms.
 */
import { expect, it, vi } from 'vitest';
import { jobCollection, leasePath } from '../../functions/adapters/firestore-paths.ts';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

vi.mock('../../functions/runs/dispatch.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../functions/runs/dispatch.ts')>();
  // What the parts' hold lasts without renewal (requests themselves keep their own horizon).
  return { ...original, requestHorizonMs: () => 1_000 };
});

const OBJECTS = 100;
const LINES = 2;
const SHARD = 20;

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('a job whose parts take longer than the hold is not listed again until its last part ended', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  await storage.createBucket('held');
  await Promise.all(
    Array.from({ length: OBJECTS }, (_, o) =>
      storage
        .bucket('held')
        .file(`in/o-${String(o).padStart(2, '0')}.json`)
        .save(`${Array.from({ length: LINES }, (_, l) => JSON.stringify({ o, l })).join('\n')}\n`, {
          resumable: false,
        }),
    ),
  );
  // Every second: once its parts are done, the job is due again at once.
  const yaml = cloudGcsYaml('held', 'held', 'in/').replace(
    '    fingerprinting: true\n',
    '    fingerprinting: true\n    trigger:\n      interval:\n        duration: 1s\n',
  );
  // Room for the run, its parts and the job's next run at once.
  Object.assign(t.deps.config, { shardObjects: SHARD, tenantRunCap: 8 });
  // Slow answers: each part takes seconds (and fingerprints its objects when it ends).
  gcs.setFaults({ latencyMs: 700 });
  const out = printed();
  const runners = await Promise.all(
    ['h1', 'h2', 'h3'].map((owner) => startPullRunner(t.deps, { owner, concurrency: 3, print: out.output })),
  );
  let ticking = true;
  const tick = (async () => {
    while (ticking) {
      await dispatchDueRuns(t.deps).catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const runDocs = async () => (await jobCollection(db, 'default', 'held', 'runs').get()).size;
  const ended = async () =>
    (
      (await json(await t.request('/api/events?type=job-run-ended&job=held&limit=1000', { headers: admin })))
        .events as { payload: Record<string, unknown> }[]
    ).map((e) => e.payload);
  try {
    await deployToCloud(t, admin, 'held', yaml);
    await until(
      async () =>
        ((await db.doc(leasePath('default', 'held')).get()).get('owner') ?? '').startsWith('parts:'),
      15_000,
      'the parts holding the job',
    );
    // Deployed again while its parts are read: that request finds the job held.
    const again = await t.request('/api/jobs/held/deploy', jsonInit('POST', { workers: ['cloud'] }, admin));
    expect(again.status).toBe(200);
    await until(
      async () => {
        const payloads = await ended();
        // The sharded run has ended, and a later run (which found nothing new) after it.
        return (
          payloads.some((p) => p.parts !== undefined) &&
          payloads.some((p) => p.parts === undefined) &&
          (await runDocs()) === 0
        );
      },
      25_000,
      'the sharded run and a run after it ended, no run document left',
    );
  } finally {
    ticking = false;
    await tick;
    await Promise.all(runners.map((r) => r.stop()));
    gcs.setFaults({});
  }
  const lines = out.lines();
  const twice = lines.filter((line, i) => lines.indexOf(line) !== i);
  expect(twice, 'lines printed more than once').toEqual([]);
  expect(lines).toHaveLength(OBJECTS * LINES);
  const sharded = (await ended()).filter((p) => p.parts !== undefined);
  expect(sharded, 'one set of parts, one job-run-ended with their totals').toHaveLength(1);
  expect(sharded[0]).toMatchObject({
    parts: (OBJECTS - SHARD) / SHARD,
    listed: OBJECTS,
    fingerprinted: OBJECTS,
    events: OBJECTS * LINES,
    failed: false,
  });
}, 60_000);
