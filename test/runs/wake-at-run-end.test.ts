/**
 * A notification that wakes a job on the `cloud` worker just as a run of it ends: the run has
 * read its last message and stopped, and has not yet recorded what it leaves (the lease, the
 * next due time). Acknowledging that push as "a run is requested" would leave the object
 * unread until some other upload: the wake must be brought back later or request a run.
 */
import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setUpBucketNotifications } from '../../cli/gcs-notify.ts';
import { leasePath } from '../../functions/adapters/firestore-paths.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import { handleNotificationWake } from '../../functions/runs/wake.ts';
import { deployToCloud, wokenGcsYaml } from '../helpers/cloud-jobs.ts';
import { type NotifiedEnv, notifiedEnv } from '../helpers/notified-env.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

/** Called once, as the next run has ended and records the state it leaves (`idle`). */
const atRunEnd: { next?: () => Promise<void> } = {};
vi.mock('../../functions/runs/cloud-states.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../functions/runs/cloud-states.ts')>();
  return {
    ...original,
    recordCloudState: async (...args: Parameters<typeof original.recordCloudState>) => {
      const next = atRunEnd.next;
      if (next && args[2].state !== 'running') {
        atRunEnd.next = undefined;
        await next();
      }
      return original.recordCloudState(...args);
    },
  };
});

const PROJECT = 'demo-wake-end';
let env: NotifiedEnv;
let db: Firestore;
beforeAll(async () => {
  env = await notifiedEnv(PROJECT);
  db = await env.t.deps.clients.firestore();
});
afterAll(async () => env.close());

/** The `object` of each event printed so far. */
const objectsOf = (out: ReturnType<typeof printed>) =>
  out.lines().map((line) => (JSON.parse(line) as { object: string }).object);

/** A woken job over a new bucket, its first run (the backfill) done, a pull runner serving it. */
async function wokenJob(job: string) {
  const { t, admin, storage, pubsub } = env;
  const bucket = `wake-${randomUUID().slice(0, 8)}`;
  await storage.createBucket(bucket);
  const { subscription } = await setUpBucketNotifications(
    { bucket, name: `sluice-gcs-${job}-${randomUUID().slice(0, 6)}`, project: PROJECT },
    { storage, pubsub },
  );
  const out = printed();
  const answers: RunAnswer[] = [];
  const runner = await startPullRunner(t.deps, {
    owner: `${job}-runner`,
    concurrency: 1,
    print: out.output,
    onAnswer: (a) => answers.push(a),
  });
  await deployToCloud(t, admin, job, wokenGcsYaml(job, bucket, 'in/', subscription));
  await until(() => answers.some((a) => a.outcome === 'completed'), 20_000, 'the first run');
  await runner.idle(300);
  const put = (name: string) => storage.bucket(bucket).file(name).save('{"v":1}\n', { resumable: false });
  return { out, runner, put };
}

const wake = (job: string) => handleNotificationWake(env.t.deps, { tenant: 'default', job });

/** What the wake subscription does with a push not acknowledged: delivers it again until it is. */
async function redeliverUntilAcknowledged(job: string, first: { ack: boolean }): Promise<void> {
  let acknowledged = first.ack;
  await until(
    async () => {
      if (!acknowledged) acknowledged = (await wake(job)).ack;
      return acknowledged;
    },
    20_000,
    `the wake of ${job} acknowledged`,
  );
}

describe('a notification that comes as a run ends', () => {
  const cases: { job: string; title: string; slow: boolean }[] = [
    { job: 'ending', title: 'is read by a later run', slow: false },
    {
      job: 'slow-end',
      title: 'is read by a later run when the runner records the end after its lease has lapsed',
      slow: true,
    },
  ];
  for (const { job, title, slow } of cases)
    it(title, async () => {
      const { out, runner, put } = await wokenJob(job);
      let late: { ack: boolean } | undefined;
      try {
        atRunEnd.next = async () => {
          // As if the runner had taken longer than its lease to get here.
          if (slow) {
            const lease = db.doc(leasePath('default', job));
            if ((await lease.get()).exists) await lease.update({ expires_at_ms: Date.now() - 1 });
          }
          await put('in/late.json');
          late = await wake(job);
        };
        await put('in/a.json');
        expect(await wake(job)).toEqual({ ack: true, decision: 'request' });
        await until(() => late !== undefined, 20_000, 'the run to end');
        await redeliverUntilAcknowledged(job, late!);
        await until(() => objectsOf(out).includes('in/late.json'), 20_000, 'the late object printed');
        await runner.idle(300);
        expect(objectsOf(out).sort()).toEqual(['in/a.json', 'in/late.json']);
      } finally {
        atRunEnd.next = undefined;
        await runner.stop();
      }
    }, 90_000);
});
