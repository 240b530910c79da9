/**
 * The scheduled runner (cloud worker): Firestore lease per job, stop before the
 * deadline and continue on the next tick, two ticks at once process each object once.
 */
import { randomUUID } from 'node:crypto';
import { Firestore } from '@google-cloud/firestore';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunEvent } from '../../functions/runner/types.ts';
import {
  runScheduledJob,
  type ScheduledDeps,
  type ScheduledJob,
  type TickOptions,
} from '../../functions/scheduled/tick.ts';
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

type TestDeps = ScheduledDeps & { jobs: ScheduledJob[] };

/** Each job of `d` through the scheduled runner, one after the other: a broken one, then the real one. */
async function runJobs(d: TestDeps, options: TickOptions) {
  const results = [];
  for (const job of d.jobs) results.push(await runScheduledJob(d, job, options));
  return results;
}

function deps(
  tenant: string,
  seen: string[],
  delayMs: number,
  extra: Record<string, unknown> = {},
): TestDeps {
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
    jobs: [{ tenant, name: 'broken' } as unknown as ScheduledJob, job],
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
  // An injected clock that moves only as batches are written (100 ms each): the deadline is
  // reached after the same batches whatever the machine's load, not after 1.4 s of wall time.
  let clock = Date.parse('2026-11-20T10:00:00Z');
  const slow = deps('t-deadline', seen, 0);
  const output = slow.outputFor!(undefined as unknown as ScheduledJob)!;
  const first = await runJobs(
    {
      ...slow,
      now: () => clock,
      outputFor: () => ({
        async write(events: RunEvent[], unit?: unknown) {
          await output.write(events, unit as never);
          clock += 100;
        },
        async close() {},
      }),
    },
    { deadlineMs: clock + 1500, marginMs: 100 },
  );
  expect(first[0]).toMatchObject({ job: 'broken', outcome: 'skipped' });
  expect(first[1]).toMatchObject({ job: 'cloud-job', outcome: 'stopped-at-deadline' });
  // It winds up a quarter of its time before the deadline (1.05 s): 10 batches of 10 fit
  // before, and the object being read finishes.
  expect(seen.length).toBeGreaterThanOrEqual(100);
  expect(seen.length).toBeLessThan(200);
  let outcome = '';
  for (let i = 0; i < 20 && outcome !== 'completed'; i++) {
    const next = await runJobs(deps('t-deadline', seen, 0), { deadlineMs: Date.now() + 10_000 });
    outcome = next[1]!.outcome;
  }
  expect(outcome).toBe('completed');
  // Wound up before the deadline, it kept what it delivered: nothing is delivered twice.
  expect(seen.toSorted()).toEqual([...new Set(seen)].toSorted());
  expect(seen).toHaveLength(200);
  const after = await runJobs(deps('t-deadline', seen, 0), { deadlineMs: Date.now() + 10_000 });
  expect(after[1]!.outcome).toBe('not-due');
});

it('two ticks at once: one holds the lease, each line is delivered exactly once', async () => {
  const seen: string[] = [];
  const interval = { trigger: { interval: { duration: '1h' } } };
  const [a, b] = await Promise.all([
    runJobs({ ...deps('t-race', seen, 5, interval), owner: 'a' }, { deadlineMs: Date.now() + 15_000 }),
    runJobs({ ...deps('t-race', seen, 5, interval), owner: 'b' }, { deadlineMs: Date.now() + 15_000 }),
  ]);
  const outcomes = [a[1]!.outcome, b[1]!.outcome].sort();
  expect(outcomes[0]).toBe('completed');
  expect(['leased-elsewhere', 'not-due']).toContain(outcomes[1]);
  expect(seen).toHaveLength(200);
  expect(new Set(seen).size).toBe(200);
});

it('cron with a window on the cloud worker: waits for the first beat, catches up window by window, then one window a beat', async () => {
  const hours = [8, 9, 10, 11, 12];
  for (const h of hours) await env.put(`win/2026/11/20/${String(h).padStart(2, '0')}/a.json`, `{"h":${h}}`);
  const fields = {
    'object-names': ['win/'],
    'timestamp-mode': {
      'object-name-pattern': '^win/(?P<Y>\\d{4})/(?P<m>\\d{2})/(?P<d>\\d{2})/(?P<H>\\d{2})/',
    },
    trigger: {
      cron: {
        cron: '0 * * * *',
        window: {
          size: '1h',
          start: {
            'start-time': { 'start-time': '2026-11-20 08:00:00.000 +0000', 'highwatermark-file': 'hw' },
          },
        },
      },
    },
  };
  const seen: string[] = [];
  let clock = 0;
  const tickAt = async (iso: string) => {
    clock = Date.parse(iso);
    const [, result] = await runJobs(
      { ...deps('t-cron', seen, 0, fields), now: () => clock },
      { deadlineMs: clock + 30_000 },
    );
    return result!.outcome;
  };
  const watermark = async () =>
    (await db.doc('tenants/t-cron/jobs/cloud-job/watermarks/hw').get()).get('value') as string | undefined;

  expect(await tickAt('2026-11-20T10:20:00Z')).toBe('not-due');
  expect(seen).toEqual([]);
  // The 11:00 beat: the windows 08–09, 09–10 and 10–11, one after the other.
  expect(await tickAt('2026-11-20T11:00:04Z')).toBe('completed');
  expect(seen).toEqual(['{"h":8}', '{"h":9}', '{"h":10}']);
  expect(await watermark()).toBe('2026-11-20T11:00:00.000Z');
  expect(await tickAt('2026-11-20T11:40:00Z')).toBe('not-due');
  expect(await tickAt('2026-11-20T12:00:03Z')).toBe('completed');
  expect(seen).toEqual(['{"h":8}', '{"h":9}', '{"h":10}', '{"h":11}']);
  expect(await watermark()).toBe('2026-11-20T12:00:00.000Z');
});
