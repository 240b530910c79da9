/**
 * Deployment review M3: a request that waits for a slot of its tenant (a part, a run that
 * notifications woke) waited in the runner that took it, for up to a budget. One tenant's
 * many parts could so take every runner instance, and other tenants' requests were refused
 * (and, pushed five times in vain, dead-lettered as failed runs). Now such a request is
 * parked in Firestore and the runner is free at once; a slot given back, or the tick,
 * sends it back to the queue.
 */
import { expect, it } from 'vitest';
import {
  parkInBatch,
  parkRun,
  releaseParkedRun,
  releaseParkedRuns,
} from '../../functions/runs/parked-runs.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import { ensureRunChannel, publishRunRequests, RUN_TOPIC } from '../../functions/runs/run-channel.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import { takeRunSlot } from '../../functions/runs/tenant-slots.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it("a request waiting for its tenant's slot keeps no runner busy: another tenant's run goes at once", async () => {
  await bootstrapTestAdmin(t);
  const db = await t.deps.clients.firestore();
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo' });
  for (const bucket of ['parked-busy', 'parked-other']) {
    await storage.createBucket(bucket);
    await storage.bucket(bucket).file('in/o.json').save(`{"bucket":"${bucket}"}\n`, { resumable: false });
  }
  // One slot a tenant, the busy tenant's held by another run; a wait in a runner lasted a budget.
  Object.assign(t.deps.config, { tenantRunCap: 1, cloudRunBudget: '30s' });
  const held = await takeRunSlot(db, 'parked-busy', 'another-run', { cap: 1, untilMs: Date.now() + 120_000 });
  expect(held).toBeDefined();
  const busy = bearer(await tokenFor(t, { role: 'operator', tenant: 'parked-busy' }));
  const other = bearer(await tokenFor(t, { role: 'operator', tenant: 'parked-other' }));
  const out = printed();
  const answers: RunAnswer[] = [];
  // One run at a time: a runner waiting for a slot would block every other request.
  const runner = await startPullRunner(t.deps, {
    owner: 'only-runner',
    concurrency: 1,
    print: out.output,
    onAnswer: (a) => answers.push(a),
  });
  try {
    await deployToCloud(t, busy, 'woken', cloudGcsYaml('woken', 'parked-busy', 'in/'));
    await until(() => answers.length === 1, 10_000, "the deploy's own request, at the cap");
    // As a notification would ask for it: a request nothing else would make again.
    await publishRunRequests(await t.deps.clients.pubsub(), [
      { tenant: 'parked-busy', job: 'woken', version: 1, requested_ms: Date.now(), reason: 'notified' },
    ]);
    await deployToCloud(t, other, 'elsewhere', cloudGcsYaml('elsewhere', 'parked-other', 'in/'));
    const started = Date.now();
    await until(
      () => out.lines().some((line) => line.includes('parked-other')),
      10_000,
      "the other tenant's run while the busy tenant is at its cap",
    );
    expect(Date.now() - started, 'well within the busy tenant’s budget').toBeLessThan(10_000);
    expect(out.lines()).toHaveLength(1);
    // The slot given back, the tick sends the parked request back to the queue.
    await held!.free();
    await until(
      async () => (await releaseParkedRuns(t.deps)) > 0 || out.lines().length === 2,
      10_000,
      'the parked request released',
    );
    await until(() => out.lines().length === 2, 10_000, 'the woken run once the slot is free');
    await runner.idle(300);
  } finally {
    await runner.stop();
  }
  expect(out.lines().filter((line) => line.includes('parked-busy'))).toHaveLength(1);
  const admin = bearer(await bootstrapTestAdmin(t));
  const failures = await json(await t.request('/api/events?type=run-job-failure', { headers: admin }));
  expect(failures.events).toEqual([]);
  expect((await db.collectionGroup('parked-runs').get()).size, 'nothing left parked').toBe(0);
}, 60_000);

it('a part larger than a Firestore document parks and comes back whole, oldest first', async () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const db = await t.deps.clients.firestore();
  const pubsub = await t.deps.clients.pubsub();
  await ensureRunChannel(pubsub);
  const [subscription] = await pubsub.topic(RUN_TOPIC).createSubscription('parked-runs-probe');
  // Names that do not compress: 5,000 of 600 random characters, about 3 MB of JSON.
  const name = () =>
    Array.from({ length: 600 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(random() * 36)]).join(
      '',
    );
  const part = (index: number, requested_ms: number): RunRequest => ({
    tenant: 'parked-big',
    job: 'big.job',
    version: 3,
    requested_ms,
    reason: 'part',
    part: {
      run: 'due-1',
      index,
      objects: Array.from({ length: 5_000 }, (_, i) => ({ name: `in/${name()}`, generation: String(i) })),
    },
  });
  const older = part(1, 1_000);
  const newer = part(2, 2_000);
  await parkRun(db, older, 10_000);
  await parkRun(db, newer, 20_000);
  expect(await releaseParkedRun(t.deps, db, 'parked-big')).toBe(true);
  expect(await releaseParkedRun(t.deps, db, 'parked-big')).toBe(true);
  expect(await releaseParkedRun(t.deps, db, 'parked-big')).toBe(false);
  const received: RunRequest[] = [];
  subscription.on('message', (message: { data: Buffer; ack(): void }) => {
    received.push(JSON.parse(message.data.toString()) as RunRequest);
    message.ack();
  });
  await until(() => received.length >= 2, 20_000, 'both parts on the queue');
  await subscription.close();
  expect(
    received.map((r) => r.part?.index),
    `seed ${seed}`,
  ).toEqual([1, 2]);
  expect(received[0], `seed ${seed}`).toEqual({ ...older, waiting_since_ms: 10_000 });
  expect(received[1], `seed ${seed}`).toEqual({ ...newer, waiting_since_ms: 20_000 });
  expect((await db.collection('tenants/parked-big/parked-runs').get()).size, 'no piece left').toBe(0);
  await subscription.delete();
}, 60_000);

it('a request that parked itself again after it was sent is not deleted by its sender', async () => {
  const db = await t.deps.clients.firestore();
  const request: RunRequest = {
    tenant: 'parked-again',
    job: 'again',
    version: 1,
    requested_ms: 5_000,
    reason: 'part',
    part: { run: 'due-5', index: 0, objects: [{ name: 'in/a' }] },
  };
  // Handed over: parked and claimed in the sender's write, then published...
  const batch = db.batch();
  const handed = parkInBatch(db, batch, request, { claimedForMs: 30_000 });
  const [committed] = await batch.commit();
  // ...taken by a runner that found the tenant at its cap and parked it again...
  await parkRun(db, request);
  // ...before the sender cleared its entry: the parked request stays.
  await handed.remove(committed!.writeTime);
  const parked = await db.collection('tenants/parked-again/parked-runs').get();
  expect(parked.size).toBe(1);
  expect(parked.docs[0]!.get('claimed_until_ms')).toBe(0);
  // Not parked again: the sender's entry goes.
  const second = db.batch();
  const handedAgain = parkInBatch(
    db,
    second,
    { ...request, part: { ...request.part!, index: 1 } },
    { claimedForMs: 30_000 },
  );
  const [again] = await second.commit();
  await handedAgain.remove(again!.writeTime);
  expect((await db.collection('tenants/parked-again/parked-runs').get()).size).toBe(1);
});
