/**
 * `npm run bench:gcs:cores`: the `gcs` input on every core (functions/runner/cores/),
 * measured as a user meets it: the whole `sluice job run` process, its output piped into
 * `wc -l`, side by side with `zcat | wc -l` over the same files (the single-core floor).
 * Objects are served by the project's storage emulator (in this process, from disk); the
 * CPU time this process uses during each run is the emulator's, on the same two cores.
 *
 * 1. 40 gzip NDJSON objects of 5 MB raw: read threads as configured (one per core), then
 *    with SLUICE_READ_THREADS=0 (everything on the main thread, as before the pool), each
 *    followed by `zcat | wc -l`; the ratio is the median of the per-run ratios.
 * 2. One object of 200 MB raw (the single-object path): threads vs the main thread.
 * 3. What the target leaves room for: a minimal reader (bench/floor/) that does only the
 *    input's essential work on two threads (inflate each object whole, check and copy its
 *    lines with the input's WebAssembly, write them in order), from disk and through
 *    `@google-cloud/storage` from the emulator, each followed by `zcat | wc -l`.
 * 4. Where the time of section 1's runs goes: RUNS more runs with bench/run-timeline.cjs
 *    preloaded, which notes when the process makes its first storage request (the
 *    listing) and its first object request, and when it exits.
 * 5. Section 1's read threads again, with the local stack running beside them: started as
 *    `npm start` starts it (test/helpers/stack-process.ts: its own emulators, a fresh data
 *    directory, plain HTTP on a port the system picks) and left idle for STACK_SETTLE_MS first, as a
 *    stack that has been running a while is (its Java emulators are busiest just after
 *    they start). The job still reads from this process's storage emulator.
 *
 * @example
 *   BENCH_RUNS=3 npm run bench:gcs:cores
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStorageEmulator } from '../local/storage-emulator/index.ts';
import { startStackProcess } from '../test/helpers/stack-process.ts';
import { median } from './child-run.ts';
import { generateNdjson } from './gcs-data.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const STACK_SETTLE_MS = 10_000;
const here = fileURLToPath(new URL('.', import.meta.url));

interface Pair {
  ours: number;
  zcat: number;
  /** CPU seconds this process (the storage emulator, serving the run) used during the run. */
  server: number;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-cores-'));
  try {
    console.error('generating data in', dir);
    const many = generateNdjson(join(dir, 'data', 'bench', 'many'));
    const one = generateNdjson(join(dir, 'data', 'bench', 'one'), 1, 200_000_000);
    const emulator = await startStorageEmulator({ port: 0, dir: join(dir, 'data') });
    const jobFile = (prefix: string) => {
      const path = join(dir, `${prefix}.yaml`);
      writeFileSync(
        path,
        `name: cores\ninput:\n  gcs:\n    bucket-name: bench\n    credentials:\n      storage-url: gs://bench\n    object-names: [${prefix}/]\n    preprocessors: [extension]\noutput:\n  print: {}\n`,
      );
      return path;
    };
    /** `RUNS` runs of `command` (made anew for each), each followed by `zcat | wc -l` over `files`. */
    const beside = async (label: string, command: () => string, files: string[]): Promise<Pair[]> => {
      const pairs: Pair[] = [];
      for (let i = 0; i < RUNS; i++) {
        const serving = process.cpuUsage();
        const ours = await timed(command());
        const served = process.cpuUsage(serving);
        const zcat = await timed(`zcat ${files.join(' ')} | wc -l`);
        pairs.push({ ours: ours.s, zcat: zcat.s, server: (served.user + served.system) / 1e6 });
        console.error(
          `  ${label}: ours ${ours.s.toFixed(2)} s, zcat ${zcat.s.toFixed(2)} s, ratio ${(zcat.s / ours.s).toFixed(2)}, ${ours.out.trim()} lines (zcat ${zcat.out.trim()})`,
        );
        if (ours.out.trim() !== zcat.out.trim())
          throw new Error(`${label} printed a different number of lines`);
      }
      return pairs;
    };
    let state = 0;
    /** `sluice job run` over `prefix/`, as a shell command (its output unredirected). */
    const jobRun = (prefix: string, env = '', nodeFlags = '') =>
      `STORAGE_EMULATOR_HOST=${emulator.url}${env} node${nodeFlags} bin/sluice.js job run ${jobFile(prefix)} --state-dir ${join(dir, `state-${state++}`)}`;
    const measure = (prefix: string, files: string[], threads: string | undefined, note = '') =>
      beside(
        `${prefix}, threads ${threads ?? 'default'}${note}`,
        () =>
          `${jobRun(prefix, threads === undefined ? '' : ` SLUICE_READ_THREADS=${threads}`)} 2>/dev/null | wc -l`,
        files,
      );
    const rows: string[][] = [];
    const row = (what: string, pairs: Pair[], target: string) => {
      const ratio = median(pairs.map((p) => p.zcat / p.ours));
      rows.push([
        what,
        `${median(pairs.map((p) => p.ours)).toFixed(2)} s`,
        `zcat/ours ${ratio.toFixed(2)} (${pairs.map((p) => (p.zcat / p.ours).toFixed(2)).join(' / ')}); zcat ${median(pairs.map((p) => p.zcat)).toFixed(2)} s; storage emulator CPU ${median(pairs.map((p) => p.server)).toFixed(2)} s; ${target}`,
      ]);
    };
    row('40 × 5 MB gzip NDJSON, read threads', await measure('many', many, undefined), 'target ≥ 1.0');
    const split = await timeline(() => jobRun('many', '', ` --require ${join(here, 'run-timeline.cjs')}`));
    rows.push(
      [
        '  its start -> first object request',
        split.toFirstObject,
        `the listing requested at ${split.toList}`,
      ],
      ['  its first object request -> exit', split.reading, 'the read itself (RUNS more runs, timed inside)'],
    );
    row('  same, main thread only (READ_THREADS=0)', await measure('many', many, '0'), 'before the pool');
    row(
      '1 × 200 MB gzip NDJSON, read threads',
      await measure('one', one, undefined),
      'not slower than below',
    );
    row('  same, main thread only (READ_THREADS=0)', await measure('one', one, '0'), 'before the pool');
    const floor = await buildFloor(dir);
    const measureFloor = (label: string, args: string) =>
      beside(label, () => `node ${floor} ${args} | wc -l`, many);
    row(
      'minimal reader (bench/floor), from disk',
      await measureFloor('floor, disk', `dir ${join(dir, 'data', 'bench', 'many')}`),
      'the essential work alone',
    );
    row(
      '  same, through @google-cloud/storage',
      await measureFloor('floor, storage', `gcs ${emulator.url} bench many/`),
      'and the client with its downloads',
    );
    const stack = await startStackProcess(join(dir, 'stack'));
    try {
      await new Promise((resolve) => setTimeout(resolve, STACK_SETTLE_MS));
      row(
        '40 × 5 MB gzip NDJSON, with the local stack running',
        await measure('many', many, undefined, ', local stack running'),
        'target ≥ 0.8',
      );
    } finally {
      await stack.stop('SIGINT');
    }
    await emulator.stop();
    const width = Math.max(...rows.map((r) => r[0]!.length));
    console.log(
      `\nbench:gcs:cores (${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}, median of ${RUNS})`,
    );
    for (const [what, figure, note] of rows)
      console.log(`${what!.padEnd(width)}  ${figure!.padEnd(8)}  ${note}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Medians of RUNS runs of `command` (stdout to `wc -l`) with bench/run-timeline.cjs preloaded. */
async function timeline(command: () => string) {
  const runs: { list: number; firstObject: number; exit: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    // The command's stderr (where the timeline goes) to this pipeline's stdout, its stdout to wc.
    const { out } = await timed(`{ ${command()} 2>&3 | wc -l > /dev/null; } 3>&1 | grep '^run-timeline '`);
    runs.push(JSON.parse(out.slice('run-timeline '.length)));
  }
  const ms = (values: number[]) => `${(median(values) / 1000).toFixed(2)} s`;
  return {
    toList: ms(runs.map((r) => r.list)),
    toFirstObject: ms(runs.map((r) => r.firstObject)),
    reading: ms(runs.map((r) => r.exit - r.firstObject)),
  };
}

/** Bundles the minimal reader (bench/floor/) into `dir`; returns its script. */
async function buildFloor(dir: string): Promise<string> {
  const { build } = await import('esbuild');
  const common = {
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    logLevel: 'warning' as const,
    // The storage client's CommonJS dependencies, in an ES module bundle.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  };
  await build({
    ...common,
    entryPoints: [join(here, 'floor', 'worker.ts')],
    outfile: join(dir, 'floor-worker.mjs'),
  });
  await build({ ...common, entryPoints: [join(here, 'floor', 'main.ts')], outfile: join(dir, 'floor.mjs') });
  return join(dir, 'floor.mjs');
}

/** Runs a shell pipeline; asynchronously, since the emulator serving it runs in this process. */
async function timed(command: string): Promise<{ s: number; out: string }> {
  const start = performance.now();
  const out = await new Promise<string>((resolve, reject) =>
    execFile('/bin/bash', ['-c', command], { maxBuffer: 1 << 20 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    ),
  );
  return { s: (performance.now() - start) / 1000, out };
}

await main();
