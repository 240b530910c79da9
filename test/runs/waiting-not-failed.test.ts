/**
 * Review F1b, second half: a request that waits for a slot of its tenant (a part, or a run
 * that notifications woke) was answered "again later" each time it found the tenant at its
 * cap, and Pub/Sub counted every such answer as a failed delivery: after five it dead-lettered
 * the request and `handleDeadRunRequest` reported `run-job-failure` ("the run failed 5 times
 * and was given up") for a job that never ran, let alone failed. Now a request that waited
 * its time for a slot is requested again and acknowledged: it keeps waiting, and runs once
 * a slot is free. (Since then it waits parked in Firestore, not in a runner: parked-runs.test.ts.)
 */
import { expect, it } from 'vitest';
import { releaseParkedRuns } from '../../functions/runs/parked-runs.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import { publishRunRequests } from '../../functions/runs/run-channel.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import { takeRunSlot } from '../../functions/runs/tenant-slots.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('a request waiting for a slot more than five times is not reported as a failed run; it runs once a slot is free', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  await storage.createBucket('waits');
  await storage.bucket('waits').file('in/o.json').save('{"o":1}\n', { resumable: false });
  // One slot, held by another run for the whole wait; each wait for it lasts one budget.
  Object.assign(t.deps.config, { tenantRunCap: 1, cloudRunBudget: '1s' });
  const held = await takeRunSlot(db, 'default', 'another-run', { cap: 1, untilMs: Date.now() + 60_000 });
  expect(held).toBeDefined();
  const out = printed();
  const answers: RunAnswer[] = [];
  const runner = await startPullRunner(t.deps, {
    owner: 'waiter',
    concurrency: 2,
    print: out.output,
    onAnswer: (a) => answers.push(a),
  });
  const failures = async () =>
    (await json(await t.request('/api/events?type=run-job-failure&job=waits', { headers: admin }))).events;
  try {
    await deployToCloud(t, admin, 'waits', cloudGcsYaml('waits', 'waits', 'in/'));
    // As a notification would ask for it: this request waits for a slot rather than for the next tick.
    await publishRunRequests(await t.deps.clients.pubsub(), [
      { tenant: 'default', job: 'waits', version: 1, requested_ms: Date.now(), reason: 'notified' },
    ]);
    // The deploy's own request (not waiting) and the notified one, parked; six ticks find the tenant at its cap.
    await until(
      async () => answers.filter((a) => a.outcome === 'tenant-at-cap').length >= 2,
      20_000,
      'the notified request parked',
    );
    for (let tick = 0; tick < 6; tick++) expect(await releaseParkedRuns(t.deps)).toBe(0);
    expect(await failures()).toEqual([]);
    await held!.free();
    await until(
      async () => (await releaseParkedRuns(t.deps)) > 0 || out.lines().length === 1,
      10_000,
      'the parked request released once the slot is free',
    );
    await until(() => out.lines().length === 1, 10_000, 'the run once the slot is free');
    await runner.idle(300);
  } finally {
    await runner.stop();
  }
  expect(answers.filter((a) => a.outcome === 'completed')).toHaveLength(1);
  expect(await failures()).toEqual([]);
}, 40_000);
