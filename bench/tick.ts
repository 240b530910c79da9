/**
 * `npm run bench:tick`: the `cloud` worker's scheduled tick (`dispatchDueRuns`, what the
 * scheduled function runs) with BENCH_JOBS (1,000) jobs deployed to it, against the
 * Firestore and Pub/Sub emulators (started here unless their hosts are set). Target
 * (issue 19): under 1 s whatever the number of jobs.
 *
 * Two ticks are measured: the first after the jobs were deployed (every job is new, so the
 * tick requests a run of each: 1,000 writes and 1,000 messages), and ticks with nothing due
 * (each job's `next_due_ms` an hour away, as its run would have left it).
 *
 * @example
 *   BENCH_JOBS=200 npm run bench:tick
 */
import { loadavg } from 'node:os';
import { deployJob, saveJob, stageJob } from '../functions/jobs/deployments.ts';
import { jobsCollection } from '../functions/jobs/store.ts';
import { dispatchDueRuns } from '../functions/runs/dispatch.ts';
import { validateJob } from '../shared/job/validate.ts';
import { testApp } from '../test/helpers/app.ts';
import { googleEmulators } from './emulators.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);

await googleEmulators();
const t = await testApp();
const actor = { tenant: 'default', roles: ['admin'] as never, subject: 'bench', kind: 'user' } as never;
try {
  console.error(`deploying ${JOBS} jobs to cloud`);
  const names = Array.from({ length: JOBS }, (_, i) => `tick-${String(i).padStart(5, '0')}`);
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(
      names.slice(i, i + 20).map(async (name) => {
        const checked = validateJob(
          {
            name,
            input: {
              'http-poll': {
                url: 'http://127.0.0.1:9/never',
                trigger: { interval: { duration: '1h', 'random-offset': '1h' } },
              },
            },
            output: { discard: {} },
          },
          { level: 'stored' },
        );
        if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
        await saveJob(t.deps, actor, name, { definition: checked.job as Record<string, unknown> });
        await stageJob(t.deps, actor, name);
        await deployJob(t.deps, actor, name, ['cloud']);
      }),
    );
  }
  const db = await t.deps.clients.firestore();
  const tick = async () => {
    const started = performance.now();
    const requests = await dispatchDueRuns(t.deps);
    return { s: (performance.now() - started) / 1000, requests: requests.length };
  };
  const first = await tick();
  // As if each job had run: due again in an hour.
  const writer = db.bulkWriter();
  for (const name of names)
    void writer.update(
      jobsCollection(db, 'default').doc(name),
      'deployments.cloud.next_due_ms',
      Date.now() + 3_600_000,
    );
  await writer.close();
  const runs: { s: number; requests: number }[] = [];
  for (let i = 0; i < 3; i++) runs.push(await tick());
  console.log(`\nbench:tick (${JOBS} jobs deployed to cloud; load average ${loadavg()[0]!.toFixed(1)})`);
  console.log(
    `first tick (every job new): ${first.s.toFixed(2)} s, ${first.requests} run requests published`,
  );
  console.log(
    `ticks with nothing due: ${runs.map((r) => r.s.toFixed(2)).join(', ')} s, ${runs.map((r) => r.requests).join(', ')} requests (target < 1 s)`,
  );
} finally {
  await t.close();
}
process.exit(0);
