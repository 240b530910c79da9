/**
 * `npm run bench:tick`: the `cloud` worker's scheduled tick with BENCH_JOBS (1,000) jobs
 * deployed to it, none of them due: each has an hourly interval trigger and has just run
 * (its state says so, as a tick would have left it). The tick is the one the scheduled
 * function runs (`cloudWorkerTick`), against the Firestore emulator (started here unless
 * FIRESTORE_EMULATOR_HOST is set). Target (issue 19): under 1 s.
 *
 * Also measured: the first tick after the jobs were deployed (each is seen for the first
 * time, nothing is due yet either: `random-offset: 1h` puts every first run later).
 *
 * @example
 *   BENCH_JOBS=200 npm run bench:tick
 */
import { loadavg } from 'node:os';
import { jobCollection } from '../functions/adapters/firestore-paths.ts';
import { deployJob, saveJob, stageJob } from '../functions/jobs/deployments.ts';
import { cloudWorkerTick } from '../functions/scheduled/cloud-worker.ts';
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
    const results = await cloudWorkerTick(t.deps, Date.now() + 60_000);
    return { s: (performance.now() - started) / 1000, results };
  };
  const first = await tick();
  // As if each job had just run: due again in an hour.
  const now = Date.now();
  const writer = db.bulkWriter();
  for (const name of names)
    void writer.set(jobCollection(db, 'default', name, 'scheduled').doc('state'), {
      first_seen_ms: now - 60_000,
      last_run_ended_ms: now,
    });
  await writer.close();
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) runs.push((await tick()).s);
  const outcomes = (r: { outcome: string }[]) =>
    JSON.stringify(
      r.reduce<Record<string, number>>((n, x) => ({ ...n, [x.outcome]: (n[x.outcome] ?? 0) + 1 }), {}),
    );
  console.log(`\nbench:tick (${JOBS} jobs deployed to cloud; load average ${loadavg()[0]!.toFixed(1)})`);
  console.log(
    `first tick (every job seen for the first time): ${first.s.toFixed(2)} s, ${outcomes(first.results)}`,
  );
  console.log(`ticks with nothing due: ${runs.map((s) => s.toFixed(2)).join(', ')} s (target < 1 s)`);
} finally {
  await t.close();
}
process.exit(0);
