/**
 * The scheduled runner (cloud worker): Firestore lease per job, stop before the
 * deadline and continue on the next tick, two ticks at once process each object once.
 */
import { randomUUID } from 'node:crypto';
import { Firestore } from '@google-cloud/firestore';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunEvent } from '../../functions/runner/types.ts';
import { runScheduledTick, type ScheduledDeps, type ScheduledJob } from '../../functions/scheduled/tick.ts';
import { type GcsTestEnv, gcsJob, gcsTestEnv } from './helpers.ts';

let env: GcsTestEnv;
let db: Firestore;

beforeAll(async () => {
  env = await gcsTestEnv('sched-bucket');
  db = new Firestore({ projectId: `demo-test-${randomUUID().slice(0, 8)}` });
  // The client's first call takes seconds (set-up); the deadline test should not measure that.
  await db.doc('warm/up').get();
  for (let o = 0; o < 20; o++) {
    await env.put(`o${o}.json`, Array.from({ length: 10 }, (_, i) => `{"o":${o},"i":${i}}`).join('\n'));
  }
});
afterAll(async () => {
  await env.stop();
  await db.terminate();
});

function deps(
  tenant: string,
  seen: string[],
  delayMs: number,
  extra: Record<string, unknown> = {},
): ScheduledDeps {
  const job: ScheduledJob = {
    tenant,
    name: 'cloud-job',
    version: 1,
    definition: {
      name: 'cloud-job',
      input: { gcs: gcsJob('sched-bucket', { fingerprinting: true, ...extra }) },
      output: { print: {} },
    } as ScheduledJob['definition'],
  };
  return {
    db,
    jobs: async () => [{ tenant, name: 'broken' } as unknown as ScheduledJob, job],
    outputFor: () => ({
      async write(events: RunEvent[]) {
        await new Promise((r) => setTimeout(r, delayMs));
        for (const e of events) seen.push(JSON.stringify(e));
      },
      async close() {},
    }),
    gcsOptions: { storage: env.storage, batchEvents: 10, concurrency: 1 },
  };
}

it('stops before the deadline and the next tick continues; nothing is lost or repeated', async () => {
  const seen: string[] = [];
  const first = await runScheduledTick(deps('t-deadline', seen, 100), {
    deadlineMs: Date.now() + 1500,
    marginMs: 100,
  });
  expect(first[0]).toMatchObject({ job: 'broken', outcome: 'skipped' });
  expect(first[1]).toMatchObject({ job: 'cloud-job', outcome: 'stopped-at-deadline' });
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.length).toBeLessThan(200);
  let outcome = '';
  for (let i = 0; i < 20 && outcome !== 'completed'; i++) {
    const next = await runScheduledTick(deps('t-deadline', seen, 0), { deadlineMs: Date.now() + 10_000 });
    outcome = next[1]!.outcome;
  }
  expect(outcome).toBe('completed');
  expect(new Set(seen).size).toBe(200);
  // At most the objects in flight when the deadline hit are delivered twice.
  expect(seen.length - 200).toBeLessThanOrEqual(20);
  const after = await runScheduledTick(deps('t-deadline', seen, 0), { deadlineMs: Date.now() + 10_000 });
  expect(after[1]!.outcome).toBe('not-due');
});

it('two ticks at once: one holds the lease, each line is delivered exactly once', async () => {
  const seen: string[] = [];
  const interval = { trigger: { interval: { duration: '1h' } } };
  const [a, b] = await Promise.all([
    runScheduledTick(
      { ...deps('t-race', seen, 5, interval), owner: 'a' },
      { deadlineMs: Date.now() + 15_000 },
    ),
    runScheduledTick(
      { ...deps('t-race', seen, 5, interval), owner: 'b' },
      { deadlineMs: Date.now() + 15_000 },
    ),
  ]);
  const outcomes = [a[1]!.outcome, b[1]!.outcome].sort();
  expect(outcomes[0]).toBe('completed');
  expect(['leased-elsewhere', 'not-due']).toContain(outcomes[1]);
  expect(seen).toHaveLength(200);
  expect(new Set(seen).size).toBe(200);
});
