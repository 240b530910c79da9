/**
 * Review F5: parts that find their job undeployed (or refused, or not runnable) answered and
 * never ended their run: its counter document stayed (`pending` for ever) and the job stayed
 * held by `parts:<run>` until the request horizon (2 x budget + 60 s), so deploying it again
 * waited that long. Now every final answer to a part ends it, and a job no longer deployed
 * gets its run document deleted and its parts' hold released: deployed again, it runs at once.
 */
import { expect, it } from 'vitest';
import { jobCollection, leasePath } from '../../functions/adapters/firestore-paths.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { bucketOfOneLineObjects, cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

const OBJECTS = 60;
const SHARD = 10;

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('undeployed while its parts are read: the run is dropped, and deployed again the job runs at once', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  await bucketOfOneLineObjects(gcs.url, 'dropped', OBJECTS);
  Object.assign(t.deps.config, { shardObjects: SHARD, tenantRunCap: 1 });
  // Slow answers, one run at a time, one request per runner: parts wait in the queue while one is read.
  gcs.setFaults({ latencyMs: 200 });
  const out = printed();
  const answers: RunAnswer[] = [];
  const runners = await Promise.all(
    ['u1', 'u2'].map((owner) =>
      startPullRunner(t.deps, { owner, concurrency: 1, print: out.output, onAnswer: (a) => answers.push(a) }),
    ),
  );
  const runDocs = async () => (await jobCollection(db, 'default', 'dropped', 'runs').get()).size;
  const holder = async () =>
    ((await db.doc(leasePath('default', 'dropped')).get()).get('owner') as string) ?? '';
  const yaml = cloudGcsYaml('dropped', 'dropped', 'in/');
  try {
    await deployToCloud(t, admin, 'dropped', yaml);
    await until(
      async () => (await holder()).startsWith('parts:') && out.lines().length > SHARD,
      15_000,
      'a part read while its run holds the job',
    );
    const undeployed = await t.request(
      '/api/jobs/dropped/undeploy',
      jsonInit('POST', { workers: ['cloud'] }, admin),
    );
    expect(undeployed.status).toBe(200);
    await until(
      () => answers.some((a) => a.outcome === 'not-deployed'),
      15_000,
      'a part answered not-deployed',
    );
    // Nothing of the run is left: no counter document, and nobody holds the job.
    await until(
      async () => (await runDocs()) === 0 && !(await holder()).startsWith('parts:'),
      10_000,
      'the run document deleted and the parts’ hold released',
    );
    // A new version deployed: it runs at once (not after the hold's horizon) and reads what the parts left.
    const saved = await t.request('/api/jobs/dropped', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(saved.status).toBeLessThan(300);
    const deployed = await t.request(
      '/api/jobs/dropped/deploy',
      jsonInit('POST', { workers: ['cloud'] }, admin),
    );
    expect(deployed.status).toBe(200);
    gcs.setFaults({});
    await until(() => out.lines().length >= OBJECTS, 15_000, 'every object printed after deploying again');
    await until(async () => (await runDocs()) === 0, 10_000, 'no run document left');
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
    gcs.setFaults({});
  }
  const objects = out.lines().map((line) => (JSON.parse(line) as { o: number }).o);
  expect(objects.toSorted((a, b) => a - b)).toEqual(Array.from({ length: OBJECTS }, (_, o) => o));
  const job = await json(await t.request('/api/jobs/dropped', { headers: admin }));
  expect(job.deployments).toEqual([expect.objectContaining({ worker: 'cloud', state: 'stopped' })]);
}, 60_000);
