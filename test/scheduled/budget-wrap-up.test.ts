/**
 * A run on the `cloud` worker stopped at its budget kept nothing it had delivered: objects
 * are fingerprinted when a batch of 1,000 events is delivered or when the run ends, and a run
 * cut at its budget does neither. Its rest, requested again at once, read everything again
 * (and printed it again), was cut again, for ever. Now a run winds up before its budget: it
 * starts no new object, delivers and fingerprints what it read, and its rest carries on
 * from there, so a large bucket is read in as many runs as it takes, each object once.
 */
import { expect, it } from 'vitest';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { bucketOfOneLineObjects, cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('reads a bucket larger than one budget over several runs, each object once', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const OBJECTS = 60;
  await bucketOfOneLineObjects(gcs.url, 'slow', OBJECTS);
  // 300 ms an answer: 60 objects, four at a time, take longer than one budget of 3 s.
  gcs.setFaults({ latencyMs: 300 });
  await deployToCloud(t, admin, 'slow-bucket', cloudGcsYaml('slow-bucket', 'slow', 'in/'));
  const out = printed();
  const answers: RunAnswer[] = [];
  const config = t.deps.config;
  const saved = config.cloudRunBudget;
  config.cloudRunBudget = '3s';
  const runner = await startPullRunner(t.deps, {
    owner: 'wrap-up',
    concurrency: 2,
    print: out.output,
    onAnswer: (a) => answers.push(a),
  });
  try {
    await dispatchDueRuns(t.deps);
    await until(() => answers.some((a) => a.outcome === 'completed'), 60_000, 'the run completed').catch(
      (err: Error) => {
        throw new Error(
          `${err.message}: ${answers.map((a) => a.outcome).join(', ')}; ${out.lines().length} lines printed`,
        );
      },
    );
    const stopped = answers.filter((a) => a.outcome === 'stopped-at-budget').length;
    expect(stopped).toBeGreaterThan(0);
    const objects = out.lines().map((line) => (JSON.parse(line) as { o: number }).o);
    expect(objects.toSorted((a, b) => a - b)).toEqual(Array.from({ length: OBJECTS }, (_, o) => o));
  } finally {
    await runner.stop();
    config.cloudRunBudget = saved;
    gcs.setFaults({});
  }
}, 90_000);
