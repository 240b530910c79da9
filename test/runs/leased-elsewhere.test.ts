/**
 * A run request that finds its job leased by another run (a request delivered twice, or a
 * wake and a tick at once) has the job looked at again when that lease ends. If the run
 * holding the lease ends and frees the job in between, what that run recorded must stand:
 * an expiry written over it would show a run still requested, and a notification waking
 * the job would be acknowledged with nothing to read it until the old lease's expiry.
 */
import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setUpBucketNotifications } from '../../cli/gcs-notify.ts';
import { leasePath } from '../../functions/adapters/firestore-paths.ts';
import { type Deployment, jobsCollection } from '../../functions/jobs/store.ts';
import { handleRunRequest } from '../../functions/runs/runner.ts';
import { handleNotificationWake, releaseJob } from '../../functions/runs/wake.ts';
import { acquireLease } from '../../functions/scheduled/lease.ts';
import { deployToCloud, wokenGcsYaml } from '../helpers/cloud-jobs.ts';
import { type NotifiedEnv, notifiedEnv } from '../helpers/notified-env.ts';
import { printed } from '../helpers/printed.ts';

/** Called once, right after a run request has found the job's lease taken. */
const afterLeaseRefused: { next?: () => Promise<void> } = {};
vi.mock('../../functions/scheduled/lease.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../functions/scheduled/lease.ts')>();
  return {
    ...original,
    acquireLease: async (...args: Parameters<typeof original.acquireLease>) => {
      const answer = await original.acquireLease(...args);
      const next = afterLeaseRefused.next;
      if (next && !answer.acquired) {
        afterLeaseRefused.next = undefined;
        await next();
      }
      return answer;
    },
  };
});

const PROJECT = 'demo-leased-elsewhere';
const TENANT = 'default';
let env: NotifiedEnv;
let db: Firestore;
beforeAll(async () => {
  env = await notifiedEnv(PROJECT);
  db = await env.t.deps.clients.firestore();
});
afterAll(async () => env.close());

const deploymentOf = async (job: string) =>
  (await jobsCollection(db, TENANT).doc(job).get()).get('deployments.cloud') as Deployment;

/** A job woken by notifications of a new bucket, deployed to `cloud` (no runner takes its runs); its version. */
async function deployWokenJob(job: string): Promise<number> {
  const { t, admin, storage, pubsub } = env;
  const bucket = `${job}-${randomUUID().slice(0, 8)}`;
  await storage.createBucket(bucket);
  const { subscription } = await setUpBucketNotifications(
    { bucket, name: `sluice-gcs-${job}-${randomUUID().slice(0, 6)}`, project: PROJECT },
    { storage, pubsub },
  );
  await deployToCloud(t, admin, job, wokenGcsYaml(job, bucket, 'in/', subscription));
  return (await deploymentOf(job)).version;
}

describe('a run request that finds its job leased elsewhere', () => {
  it('leaves what the lease holder recorded when that run frees the job first', async () => {
    const { t } = env;
    const job = 'held';
    const version = await deployWokenJob(job);

    // Another run holds the job, and ends (frees it, nothing more due) just after this
    // request found the lease taken.
    const holder = 'other-runner.run';
    const held = await acquireLease(db, leasePath(TENANT, job), {
      owner: holder,
      untilMs: Date.now() + 60_000,
    });
    expect(held.acquired).toBe(true);
    afterLeaseRefused.next = () =>
      releaseJob(t.deps, { tenant: TENANT, job }, holder, { version, nextDueMs: undefined });

    const answer = await handleRunRequest(
      t.deps,
      { tenant: TENANT, job, version, requested_ms: Date.now(), reason: 'notified' },
      { owner: 'this-runner', print: printed().output },
    );
    expect(answer).toMatchObject({ ack: true, outcome: 'leased-elsewhere' });
    expect(afterLeaseRefused.next).toBeUndefined();

    expect((await deploymentOf(job)).next_due_ms).toBeUndefined();
    // The next notification finds the job free with nothing requested: it asks for a run.
    expect(await handleNotificationWake(t.deps, { tenant: TENANT, job })).toEqual({
      ack: true,
      decision: 'request',
    });
  }, 60_000);

  it('has the job looked at when the lease ends while that run still holds it', async () => {
    const { t } = env;
    const job = 'still-held';
    const version = await deployWokenJob(job);
    const untilMs = Date.now() + 60_000;
    expect(
      (await acquireLease(db, leasePath(TENANT, job), { owner: 'other-runner.run', untilMs })).acquired,
    ).toBe(true);

    const answer = await handleRunRequest(
      t.deps,
      { tenant: TENANT, job, version, requested_ms: Date.now(), reason: 'notified' },
      { owner: 'this-runner', print: printed().output },
    );
    expect(answer).toMatchObject({ ack: true, outcome: 'leased-elsewhere' });
    expect((await deploymentOf(job)).next_due_ms).toBe(untilMs);
    // The lease is the holder's still, as it was.
    const lease = await db.doc(leasePath(TENANT, job)).get();
    expect(lease.data()).toMatchObject({ owner: 'other-runner.run', expires_at_ms: untilMs });
  }, 60_000);
});
