/**
 * `npm run bench:gcs:parquet`: the `gcs` input's parquet conversion against DuckDB, side
 * by side in one run. A 1M-row, 10-column snappy parquet file (written by DuckDB) is
 * read by the real input through Sluice's Cloud Storage emulator (range reads; the
 * emulator runs in a process of its own, as a storage server would), and
 * every row goes to the real `print` output writing to /dev/null: DuckDB writes JSON
 * text, so we must produce JSON text too, not just count objects. DuckDB, one thread,
 * converts the same file with `COPY ... TO '/dev/null' (FORMAT json)`. The input's row
 * groups go to the read threads (one per core), as in any run; each run also reads the
 * file once more with everything on the main thread, for comparison (not the target).
 *
 * After one untimed pass of each (printed), the machine being shared, the two are run in
 * alternation `runs` times (default 5);
 * the figures are medians, and `ratio` is the median of the per-run ratios (each run's
 * pair ran at nearly the same time, under nearly the same load).
 *
 * @example
 *   const { ratio } = await benchParquet({ dir: '/tmp/x' }); // bench/gcs.ts section 5
 *   BENCH_PARQUET_RUNS=5 npm run bench:gcs:parquet
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Storage } from '@google-cloud/storage';
import { createGcsInput } from '../functions/runner/inputs/gcs/index.ts';
import { bufferReader, parquetRows } from '../functions/runner/inputs/gcs/parquet.ts';
import { nodeParquetModules } from '../functions/runner/inputs/gcs/parquet-node.ts';
import { createPrintOutput } from '../functions/runner/outputs/print/index.ts';
import type { RunContext } from '../functions/runner/types.ts';
import { validateJob } from '../shared/job/index.ts';
import { median } from './child-run.ts';

export const PARQUET_ROWS = 1_000_000;

interface Figures {
  rowsPerSecond: number;
  /** The same input with every row group on the main thread (no read threads). */
  mainThreadRowsPerSecond: number;
  duckdbRowsPerSecond: number;
  /** DuckDB's time / ours, wall clock: the figure the target is about. */
  ratio: number;
  /**
   * The same with CPU time (this process: our input and its client side, DuckDB's
   * thread). Steadier than wall clock when others load the machine; not the target.
   */
  cpuRatio: number;
}

export interface ParquetBenchResult extends Figures {
  runs: Figures[];
}

export async function benchParquet(opts: { dir: string; runs?: number }): Promise<ParquetBenchResult> {
  const root = join(opts.dir, 'parquet-bench');
  const folder = join(root, 'bench', 'parquet');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, 'data.parquet');
  await duck(`COPY (SELECT i AS id, i * 2 AS a, i % 1000 AS b, i * 1.5 AS c, 'name-' || i AS d, i % 7 = 0 AS e,
    (i * 31) % 100000 AS f, 'k' || (i % 100) AS g, i::DOUBLE / 3 AS h, i + 17 AS j FROM range(${PARQUET_ROWS}) t(i))
    TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 122880)`);

  const emulator = await emulatorProcess(root);
  const storage = new Storage({
    apiEndpoint: emulator.url,
    projectId: 'bench',
    retryOptions: { autoRetry: false },
  });
  // DuckDB's library is loaded by now (it wrote the file); load ours too, so that neither
  // side's first run pays for loading code (a cold start is bench:coldstart's business).
  // The emulator checksums a folder's files on first use: not the input's work either.
  await warmUp(join(opts.dir, 'parquet-warm-up.parquet'));
  await storage.bucket('bench').file('parquet/data.parquet').getMetadata();
  // Then one untimed pass of each over the real file: our code is compiled while it runs
  // (JIT) and the heap sizes itself, DuckDB's reads get the page cache. The figures are
  // those of a warm reader (a worker that has read an object before); the first pass is
  // printed, so the cost of a cold one stays visible.
  const firstOurs = await timed(() => runInput(storage));
  const firstDuck = await timed(() =>
    duck(`SET threads = 1; COPY (SELECT * FROM read_parquet('${path}')) TO '/dev/null' (FORMAT json)`),
  );
  console.error(
    `untimed first pass: gcs input ${firstOurs.s.toFixed(2)} s, DuckDB ${firstDuck.s.toFixed(2)} s (ratio ${(firstDuck.s / firstOurs.s).toFixed(2)})`,
  );
  const runs: ParquetBenchResult['runs'] = [];
  try {
    for (let run = 0; run < (opts.runs ?? 5); run++) {
      const ours = await timed(() => runInput(storage));
      if (ours.value !== PARQUET_ROWS)
        throw new Error(`the input gave ${ours.value} rows, not ${PARQUET_ROWS}`);
      const mainOnly = await timed(() => runInput(storage, false));
      const duckdb = await timed(() =>
        duck(`SET threads = 1; COPY (SELECT * FROM read_parquet('${path}')) TO '/dev/null' (FORMAT json)`),
      );
      const result = {
        rowsPerSecond: PARQUET_ROWS / ours.s,
        mainThreadRowsPerSecond: PARQUET_ROWS / mainOnly.s,
        duckdbRowsPerSecond: PARQUET_ROWS / duckdb.s,
        ratio: duckdb.s / ours.s,
        cpuRatio: duckdb.cpuS / ours.cpuS,
      };
      console.error(`run ${run + 1}: ${format(result)}`);
      runs.push(result);
    }
  } finally {
    await emulator.stop();
  }
  return {
    rowsPerSecond: median(runs.map((r) => r.rowsPerSecond)),
    mainThreadRowsPerSecond: median(runs.map((r) => r.mainThreadRowsPerSecond)),
    duckdbRowsPerSecond: median(runs.map((r) => r.duckdbRowsPerSecond)),
    ratio: median(runs.map((r) => r.ratio)),
    cpuRatio: median(runs.map((r) => r.cpuRatio)),
    runs,
  };
}

async function warmUp(path: string): Promise<void> {
  await duck(`COPY (SELECT 1 AS id, 'x' AS s) TO '${path}' (FORMAT parquet)`);
  for await (const _ of parquetRows(bufferReader(await readFile(path)), nodeParquetModules)) {
  }
}

/**
 * The Cloud Storage emulator in a process of its own: in production the storage server is
 * not on the reader's CPU, and DuckDB reads a local file; the input's client side (HTTP,
 * the storage library, range reads) stays in this process and is measured.
 */
async function emulatorProcess(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'local/storage-emulator/main.ts', '--port', '0', '--gcs-dir', dir],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((ready, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /STORAGE_EMULATOR_HOST=(\S+)/.exec(out);
      if (match) ready(match[1]!);
    });
    child.once('exit', (code) => fail(new Error(`the storage emulator exited (${code})`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The parquet object through the real input into `print` writing to /dev/null; returns the
 * row count. Its row groups are decoded on the read threads, as in any run (one per core),
 * or with `threads` false on the main thread, as before them.
 */
async function runInput(storage: Storage, threads = true): Promise<number> {
  const result = validateJob(
    {
      name: 'bench',
      input: {
        gcs: {
          'bucket-name': 'bench',
          credentials: { 'storage-url': 'gs://bench' },
          mode: 'download-objects',
          'object-names': ['parquet/data.parquet'],
          preprocessors: ['extension'],
        },
      },
      output: { print: {} },
    },
    { level: 'rendered' },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  const input = createGcsInput(result.job.input.gcs!, { storage, ...(threads ? {} : { readPool: null }) });
  const sink = devNull();
  const output = createPrintOutput(sink);
  let rows = 0;
  const ctx: RunContext = {
    job: 'bench',
    worker: 'bench',
    signal: new AbortController().signal,
    fingerprints: { seen: async () => new Set(), commit: async () => {} },
    watermarks: { get: async () => undefined, set: async () => {} },
    report: (r) => {
      if (r.type === 'job-errors') console.error('job-errors', JSON.stringify(r.payload));
    },
    // As the runner sets it up for `print`: events arrive as JSON lines.
    deliverJsonLines: async (lines) => {
      rows += lines.count;
      await output.writeJsonLines!(lines);
    },
  };
  await input.run(ctx, async (batch) => {
    rows += batch.length;
    await output.write(batch);
  });
  await output.close();
  await new Promise<void>((done) => sink.end(done));
  return rows;
}

/**
 * What `print` writes to under `sluice job run > /dev/null`: stdout on a file is Node's
 * SyncWriteStream, which encodes each string to bytes and writes them synchronously.
 */
function devNull(): Writable {
  const fd = openSync('/dev/null', 'w');
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writeSync(fd, chunk);
      callback();
    },
    final(callback) {
      closeSync(fd);
      callback();
    },
  });
}

async function duck(sql: string): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const statement of sql.split(';').filter((s) => s.trim())) await connection.run(statement);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ s: number; cpuS: number; value: T }> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return { s: (performance.now() - start) / 1000, cpuS: (used.user + used.system) / 1e6, value };
}

function format(r: Figures): string {
  return `gcs input ${(r.rowsPerSecond / 1000).toFixed(0)}k rows/s, DuckDB (1 thread) ${(r.duckdbRowsPerSecond / 1000).toFixed(0)}k rows/s, ratio ${r.ratio.toFixed(2)} (target ≥ 1.0; CPU time ratio ${r.cpuRatio.toFixed(2)}); main thread only ${(r.mainThreadRowsPerSecond / 1000).toFixed(0)}k rows/s`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-parquet-'));
  try {
    const result = await benchParquet({ dir, runs: Number(process.env.BENCH_PARQUET_RUNS ?? 5) });
    // bench:gcs runs this file in a child process and reads the figures from the last line.
    if (process.env.BENCH_PARQUET_JSON) console.log(JSON.stringify(result));
    else console.log(`\nbench:gcs:parquet (median of ${result.runs.length})\n${format(result)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
