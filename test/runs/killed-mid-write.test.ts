/**
 * A runner killed while it takes or renews a job's lease or a tenant's run slot must hold
 * them no longer than their expiry. When those were Firestore transactions, a kill between
 * a transaction's read and its commit left the documents locked for about a minute (the
 * transaction's idle timeout): every other runner's lease or slot failed with "Transaction
 * lock timeout", and runner-kill.test.ts saw whole jobs dead-lettered after five failed
 * deliveries.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { leasePath } from '../../functions/adapters/firestore-paths.ts';
import { takeRunSlot } from '../../functions/runs/tenant-slots.ts';
import { acquireLease } from '../../functions/scheduled/lease.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';

const HOLDER = fileURLToPath(new URL('../fixtures/processes/hold-lease-and-slot.ts', import.meta.url));
/** The holder's lease and slot expire 1 s after its last write; this leaves room for a loaded machine. */
const WITHIN_MS = 8_000;

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

it('a runner killed mid-write holds the lease and the slot only until they expire', async () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const db = await t.deps.clients.firestore();
  for (let round = 0; round < 3; round++) {
    const tenant = `killed-${round}`;
    const path = leasePath(tenant, 'job');
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', HOLDER, t.deps.config.projectId, path, tenant],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (chunk) => String(chunk).includes('holding') && resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited with ${code} before holding`)));
    });
    // At a seeded moment of its renewing.
    await new Promise((r) => setTimeout(r, random() * 300));
    holder.kill('SIGKILL');
    const killedAt = Date.now();

    const took = async (what: string, take: () => Promise<boolean>) => {
      for (;;) {
        if (await take()) return Date.now() - killedAt;
        expect(
          Date.now() - killedAt,
          `${what}: seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`,
        ).toBeLessThan(WITHIN_MS);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const [leaseMs, slotMs] = await Promise.all([
      took(
        'the lease',
        async () =>
          (await acquireLease(db, path, { owner: 'survivor', untilMs: Date.now() + 60_000 })).acquired,
      ),
      took('the slot', async () =>
        Boolean(await takeRunSlot(db, tenant, 'survivor', { cap: 1, untilMs: Date.now() + 60_000 })),
      ),
    ]);
    expect(leaseMs).toBeLessThan(WITHIN_MS);
    expect(slotMs).toBeLessThan(WITHIN_MS);
  }
}, 120_000);
