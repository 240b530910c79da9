/**
 * Review F6: the deployment state of a job read in parts. The run recorded `stopped` when its
 * own share ended while its parts still read, each part recorded `running` again, and nothing
 * recorded the state after the last part: `sluice job ls` showed `cloud: running` after the
 * run's `job-run-ended`, until a later tick. Now the state is `running` until the last part
 * has ended, which records the final state from the run's totals.
 */
import { expect, it } from 'vitest';
import { jobCollection } from '../../functions/adapters/firestore-paths.ts';
import { jobsCollection } from '../../functions/jobs/store.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { bucketOfOneLineObjects, cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

const OBJECTS = 40;
const SHARD = 10;

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('a job read in parts shows running until its last part ended, then stopped', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  await bucketOfOneLineObjects(gcs.url, 'states', OBJECTS);
  Object.assign(t.deps.config, { shardObjects: SHARD, tenantRunCap: 1 });
  // Slow answers and one run at a time: the parts are read for a few seconds after the run's own share.
  gcs.setFaults({ latencyMs: 150 });
  const out = printed();
  const runners = await Promise.all(
    ['s1', 's2'].map((owner) => startPullRunner(t.deps, { owner, concurrency: 2, print: out.output })),
  );
  const state = async () =>
    ((await jobsCollection(db, 'default').doc('states').get()).get('deployments.cloud.state') as string) ??
    'none';
  const runDocs = async () => (await jobCollection(db, 'default', 'states', 'runs').get()).size;
  const ended = async () =>
    (await json(await t.request('/api/events?type=job-run-ended&job=states', { headers: admin }))).events as {
      payload: Record<string, unknown>;
    }[];
  try {
    await deployToCloud(t, admin, 'states', cloudGcsYaml('states', 'states', 'in/'));
    // The run's own share is done (the job's one run recorded) while its parts are still read.
    await until(
      async () =>
        (await jobCollection(db, 'default', 'states', 'scheduled').doc('state').get()).get(
          'completed_version',
        ) !== undefined,
      15_000,
      "the run's own share done",
    );
    const during = await state();
    const docs = (await jobCollection(db, 'default', 'states', 'runs').get()).docs;
    const partsPending = docs.length > 0;
    expect(partsPending, 'the parts still being read (else the check below says nothing)').toBe(true);
    expect(during, 'the state while the parts are read').toBe('running');
    const expires = (docs[0]!.get('expires_at') as { toMillis(): number } | undefined)?.toMillis();
    await until(async () => (await ended()).length > 0, 20_000, 'the run ended');
    // Read as soon as job-run-ended is seen: the state is already final.
    expect(await state()).toBe('stopped');
    expect(await runDocs(), 'no run document left').toBe(0);
    // The run's counter document expired (TTL) a day after its last change.
    expect(expires).toBeGreaterThan(Date.now() + 23 * 3_600_000);
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
    gcs.setFaults({});
  }
  expect(out.lines()).toHaveLength(OBJECTS);
  const transitions = (
    (await json(await t.request('/api/events?type=job-state-transition&job=states', { headers: admin })))
      .events as { payload: { from: string; to: string } }[]
  ).map((e) => `${e.payload.from}->${e.payload.to}`);
  expect(transitions).toEqual(['pending->running', 'running->stopped']);
  const [run] = await ended();
  expect(run!.payload).toMatchObject({ parts: 3, fingerprinted: OBJECTS, failed: false });
}, 60_000);
