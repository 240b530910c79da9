/**
 * A part delivered again after it was read, while its run goes on (Pub/Sub delivers at
 * least once; a releaser of parked requests can die between publishing one and clearing it),
 * was read again: a job without fingerprints delivered its objects twice. Now a part whose
 * share has ended in its run is acknowledged without reading.
 */
import { expect, it } from 'vitest';
import { jobCollection, leasePath } from '../../functions/adapters/firestore-paths.ts';
import { handleRunRequest } from '../../functions/runs/runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { bucketOfOneLineObjects, cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { printed } from '../helpers/printed.ts';

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('a part whose share has ended is not read again; one that has not is read', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  await bucketOfOneLineObjects(gcs.url, 'again', 4);
  // Without fingerprints: nothing else would keep a second reading out.
  await deployToCloud(
    t,
    admin,
    'again',
    cloudGcsYaml('again', 'again', 'in/').replace('    fingerprinting: true\n', ''),
  );
  const { Storage } = await import('@google-cloud/storage');
  const [files] = await new Storage({ apiEndpoint: gcs.url, projectId: 'demo' }).bucket('again').getFiles();
  const objects = files.map((f) => ({
    bucket: 'again',
    name: f.name,
    generation: String(f.metadata.generation),
    size: Number(f.metadata.size),
    ...(f.metadata.updated ? { updated: f.metadata.updated } : {}),
    ...(f.metadata.timeCreated ? { timeCreated: f.metadata.timeCreated } : {}),
  }));
  // A run with two parts out: part 0 read and ended, part 1 not yet; the parts hold the job.
  const runId = 'due-1000';
  await jobCollection(db, 'default', 'again', 'runs')
    .doc(runId)
    .set({ pending: 2, parts: 2, ended: ['0'], started_ms: Date.now(), version: 1, runs_once: true });
  await db
    .doc(leasePath('default', 'again'))
    .set({ owner: `parts:${runId}`, expires_at_ms: Date.now() + 600_000 });
  const part = (index: number, of: typeof objects): RunRequest => ({
    tenant: 'default',
    job: 'again',
    version: 1,
    requested_ms: 2_000 + index,
    reason: 'part',
    part: { run: runId, index, objects: of },
  });
  const again = printed();
  const answer = await handleRunRequest(t.deps, part(0, objects.slice(0, 2)), {
    owner: 'r1',
    print: again.output,
  });
  expect(answer).toMatchObject({ ack: true, outcome: 'leased-elsewhere' });
  expect(again.lines()).toEqual([]);
  const first = printed();
  await handleRunRequest(t.deps, part(1, objects.slice(2)), { owner: 'r2', print: first.output });
  expect(first.lines()).toHaveLength(2);
});
