/**
 * A runner killed in the middle of one of its writes (taking a job's lease, a tenant's run
 * slot, recording the job's state) must leave nothing locked. When those were Firestore
 * transactions, a runner killed between a transaction's read and its commit left the
 * documents locked for about a minute (the transaction's idle timeout): every other
 * runner's lease, slot or record failed with "Transaction lock timeout", and
 * runner-kill.test.ts saw whole jobs dead-lettered after five failed deliveries. Here the
 * runner is killed as its commit is about to leave (test/fixtures/processes/die-before-commit.ts),
 * and another must then do the same write at once.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Firestore } from '@google-cloud/firestore';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { leasePath } from '../../functions/adapters/firestore-paths.ts';
import { jobsCollection } from '../../functions/jobs/store.ts';
import { recordCloudState, recordNextDue } from '../../functions/runs/cloud-states.ts';
import { takeRunSlot } from '../../functions/runs/tenant-slots.ts';
import { acquireLease } from '../../functions/scheduled/lease.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

const DYING = fileURLToPath(new URL('../fixtures/processes/die-before-commit.ts', import.meta.url));
/** A locked document fails its first transaction after about 20 s; an unlocked one is written in well under this. */
const WITHIN_MS = 8_000;

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

/** Runs `op` in a runner that is killed as it commits; resolves once it is dead. */
async function killedAsItCommits(op: string, tenant: string): Promise<void> {
  const runner = spawn(process.execPath, ['--import', 'tsx', DYING, t.deps.config.projectId, op, tenant], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => runner.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    runner.stdout.on('data', (chunk) => String(chunk).includes('committing') && resolve());
    runner.once('exit', (code) => reject(new Error(`the runner exited with ${code} before committing`)));
  });
  runner.kill('SIGKILL');
  await exited;
}

/** The same write by another runner, after the kill: whether it did what it should. */
const survivorWrites: Record<string, (db: Firestore, tenant: string) => Promise<boolean>> = {
  lease: async (db, tenant) =>
    (await acquireLease(db, leasePath(tenant, 'job'), { owner: 'survivor', untilMs: Date.now() + 60_000 }))
      .acquired,
  slot: async (db, tenant) =>
    Boolean(await takeRunSlot(db, tenant, 'survivor', { cap: 1, untilMs: Date.now() + 60_000 })),
  job: async (db, tenant) => {
    await recordCloudState(db, tenant, { job: 'job', state: 'failed', error: 'survived' });
    await recordNextDue(db, tenant, 'job', 1, 42);
    const cloud = (await jobsCollection(db, tenant).doc('job').get()).get('deployments.cloud');
    return cloud.state === 'failed' && cloud.next_due_ms === 42;
  },
};

it.each(Object.keys(survivorWrites))(
  'a runner killed as it commits its %s write leaves nothing locked',
  async (op) => {
    const db = await t.deps.clients.firestore();
    const tenant = `killed-${op}`;
    await jobsCollection(db, tenant)
      .doc('job')
      .set({ name: 'job', deployments: { cloud: { version: 1, state: 'idle' } } });
    await killedAsItCommits(op, tenant);
    const started = Date.now();
    expect(await survivorWrites[op]!(db, tenant)).toBe(true);
    expect(Date.now() - started).toBeLessThan(WITHIN_MS);
  },
  90_000,
);
