/**
 * `npm run bench:actions`: the cost of `actions`, side by side in one run. 1M events of
 * gzip NDJSON in the project's Cloud Storage emulator (folder-backed), read by
 * `sluice job run` (a process of its own each time) into the `discard` output:
 *
 * 1. without actions (the JSON-lines fast path: lines are never parsed);
 * 2. with filter + set (two fields) + remove + rename (the chain applied to the lines as
 *    bytes: actions/line-chain.ts);
 * 3. the same transformation through `zcat | jq -c 'select(...) | ...' > /dev/null`.
 *
 * Targets (issue 21): 2 runs at ≥ 70% of the rate of 1; jq takes ≥ 5× as long as 2.
 * Rates count the run (job-run-ended's duration_ms), not process start-up; each figure is
 * the median of BENCH_RUNS (default 3) alternating runs. The share of the no-action rate is
 * the median of the per-run ratios, as in bench:gcs:cores and bench:gcs:parquet: each run's
 * pair ran side by side, under nearly the same load, where the ratio of two medians can
 * pair a quiet run with a loaded one (both are printed).
 *
 * @example
 *   BENCH_RUNS=1 npm run bench:actions
 */
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startStorageEmulator } from '../local/storage-emulator/index.ts';
import { median, runChild } from './child-run.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const FILES = 20;

const line = (i: number) =>
  `{"ts":"2026-03-01T12:00:${String(i % 60).padStart(2, '0')}.000Z","level":"info","service":"api-${i % 7}","request_id":"${(i * 2654435761).toString(16)}","status":${200 + (i % 5)},"latency_ms":${i % 997},"path":"/v1/items/${i}","message":"handled request number ${i}"}\n`;

const ACTIONS = [
  { filter: 'event.status >= 201' },
  { set: { latency_s: 'event.latency_ms / 1000.0', route: 'event.service + ":" + event.path' } },
  { remove: ['message'] },
  { rename: { request_id: 'id' } },
];
const JQ =
  'select(.status >= 201) | .latency_s = .latency_ms / 1000 | .route = .service + ":" + .path | del(.message) | .id = .request_id | del(.request_id)';

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-actions-'));
  try {
    console.error(`generating ${EVENTS} events in ${dir}`);
    const folder = join(dir, 'data', 'bench', 'ndjson');
    mkdirSync(folder, { recursive: true });
    const files: string[] = [];
    let rawBytes = 0;
    for (let f = 0; f < FILES; f++) {
      const parts: string[] = [];
      for (let i = (f * EVENTS) / FILES; i < ((f + 1) * EVENTS) / FILES; i++) parts.push(line(i));
      const text = parts.join('');
      rawBytes += text.length;
      const path = join(folder, `part-${String(f).padStart(2, '0')}.json.gz`);
      writeFileSync(path, gzipSync(text, { level: 6 }));
      files.push(path);
    }
    const emulator = await startStorageEmulator({ port: 0, dir: join(dir, 'data') });
    const jobFile = (name: string, actions?: unknown[]) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          name,
          input: {
            gcs: {
              'bucket-name': 'bench',
              credentials: { 'storage-url': 'gs://bench' },
              'object-names': ['ndjson/'],
              preprocessors: ['extension'],
            },
          },
          ...(actions ? { actions } : {}),
          output: { discard: {} },
        }),
      );
      return file;
    };
    const plain = jobFile('plain');
    const chained = jobFile('chained', ACTIONS);
    const run = async (file: string, i: number, extraEnv: Record<string, string> = {}) => {
      const child = await runChild(
        process.execPath,
        ['bin/sluice.js', 'job', 'run', file, '--state-dir', join(dir, `state-${i}-${Math.random()}`)],
        { env: { ...process.env, STORAGE_EMULATOR_HOST: emulator.url, ...extraEnv } },
      );
      const ended = child.stderr.split('job-run-ended')[1] ?? '';
      const seconds = Number(/"duration_ms":(\d+)/.exec(ended)?.[1]) / 1000;
      const out = /"events_out":(\d+)/.exec(child.stderr)?.[1];
      return { seconds, wallS: child.wallS, out: out === undefined ? undefined : Number(out) };
    };
    const plainRuns: number[] = [];
    const chainRuns: number[] = [];
    const mainThreadRuns: number[] = [];
    /** Whole processes (start-up included), as a user meets them: no actions, actions. */
    const plainWalls: number[] = [];
    const chainWalls: number[] = [];
    let kept: number | undefined;
    for (let i = 0; i < RUNS; i++) {
      const a = await run(plain, i);
      const b = await run(chained, i);
      // As before the read threads (functions/runner/cores/): the chain on the main thread.
      const c = await run(chained, i, { SLUICE_READ_THREADS: '0' });
      kept = b.out;
      console.error(
        `  run ${i + 1}: no actions ${a.seconds.toFixed(2)} s, with actions ${b.seconds.toFixed(2)} s (${b.out} events out); ratio ${(a.seconds / b.seconds).toFixed(2)}; main thread only ${c.seconds.toFixed(2)} s`,
      );
      plainRuns.push(a.seconds);
      chainRuns.push(b.seconds);
      mainThreadRuns.push(c.seconds);
      plainWalls.push(a.wallS);
      chainWalls.push(b.wallS);
    }
    await emulator.stop();
    const jqStart = performance.now();
    execSync(`zcat ${files.join(' ')} | jq -c '${JQ}' > /dev/null`, { shell: '/bin/bash', stdio: 'inherit' });
    const jqS = (performance.now() - jqStart) / 1000;
    const jqOut = Number(
      execSync(`zcat ${files.join(' ')} | jq -c '${JQ}' | wc -l`, { shell: '/bin/bash' })
        .toString()
        .trim(),
    );

    const plainS = median(plainRuns);
    const chainS = median(chainRuns);
    const pairedShare = median(plainRuns.map((plainRun, i) => plainRun / chainRuns[i]!));
    const rate = (s: number) => `${(EVENTS / s / 1000).toFixed(0)}k events/s`;
    const mb = (s: number) => `${(rawBytes / 1e6 / s).toFixed(0)} MB/s`;
    const rows = [
      [
        `${EVENTS} events gzip NDJSON → discard, no actions`,
        rate(plainS),
        `${plainS.toFixed(2)} s, ${mb(plainS)} raw`,
      ],
      [
        '  with filter + set(2) + remove + rename',
        rate(chainS),
        `${chainS.toFixed(2)} s; ${(pairedShare * 100).toFixed(0)}% of the no-action rate, median of the runs' ratios (target ≥ 70%; ratio of the medians ${((plainS / chainS) * 100).toFixed(0)}%); ${kept} events kept; whole process ${median(chainWalls).toFixed(2)} s against ${median(plainWalls).toFixed(2)} s without actions (${((median(plainWalls) / median(chainWalls)) * 100).toFixed(0)}%)`,
      ],
      [
        '  the same, main thread only (SLUICE_READ_THREADS=0)',
        rate(median(mainThreadRuns)),
        `${median(mainThreadRuns).toFixed(2)} s; ${(median(plainRuns.map((plainRun, i) => plainRun / mainThreadRuns[i]!)) * 100).toFixed(0)}% of the no-action rate`,
      ],
      [
        "  zcat | jq -c 'select(...) | ...'",
        rate(jqS),
        `${jqS.toFixed(2)} s = ${(jqS / chainS).toFixed(1)}× ours (target ≥ 5×); ${jqOut} events kept`,
      ],
    ];
    const width = Math.max(...rows.map((r) => r[0]!.length));
    console.log(`\nbench:actions (median of ${RUNS}; load average ${loadavg()[0]!.toFixed(1)})`);
    for (const [what, figure, note] of rows)
      console.log(`${what!.padEnd(width)}  ${figure!.padEnd(18)}  ${note}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
