/**
 * `npm run bench:outputs`: the outputs side by side in one run. 1M events (BENCH_EVENTS)
 * in 20 gzip NDJSON objects, read by `sluice job run` (a process of its own, as a user
 * runs it) from the project's Cloud Storage emulator (a temp folder, objects stream from
 * disk), written to `discard`, `file`, `gcs` (gzip NDJSON parts into a second bucket of
 * the same emulator), `pubsub` (Google's Pub/Sub emulator, started here unless
 * PUBSUB_EMULATOR_HOST is set) and `http-post` (a server in this process that counts
 * lines). A plain `@google-cloud/pubsub` publisher with the same batching publishing the
 * same lines (bench/pubsub-publisher.ts) is the pubsub floor.
 *
 * Rates are events / process wall time (start-up included: what a user waits for). Each
 * round runs every subject once, in the same order; ratios are medians of per-round
 * ratios, so that two figures compared were measured at nearly the same time on a shared
 * machine. Peak RSS is each process's own high-water mark (`/usr/bin/time`, else VmHWM).
 *
 * BENCH_ONLY=gcs,discard measures only those outputs (pubsub also runs the plain publisher).
 *
 * Targets: gcs ≥ 0.5 × discard; pubsub ≥ 0.8 × the plain publisher; peak RSS < 256 MB.
 *
 * @example
 *   BENCH_RUNS=1 BENCH_EVENTS=200000 npm run bench:outputs
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PubSub } from '@google-cloud/pubsub';
import { startStorageEmulator } from '../local/storage-emulator/index.ts';
import { type ChildRun, median, runChild } from './child-run.ts';
import { pubsubEmulator } from './emulators.ts';
import { benchLine } from './output-lines.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const OBJECTS = 20;
const PROJECT = 'bench-outputs';
const RSS_TARGET_MB = 256;

interface Measured {
  wallS: number;
  peakRssMb: number;
  events: number;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-outputs-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    console.error(`generating ${EVENTS} events in ${OBJECTS} gzip NDJSON objects in ${dir}`);
    const rawBytes = generate(join(dir, 'buckets', 'src', 'in'));
    mkdirSync(join(dir, 'buckets', 'dst'), { recursive: true });
    const storage = await startStorageEmulator({ port: 0, dir: join(dir, 'buckets') });
    stops.push(() => storage.stop());

    stops.push(await pubsubEmulator());
    const pubsub = new PubSub({ projectId: PROJECT });
    stops.push(() => pubsub.close());
    // No subscription: the emulator drops what it accepted, and its memory stays flat.
    await pubsub.createTopic('bench-output');
    await pubsub.createTopic('bench-plain');

    const http = await countingServer();
    stops.push(() => http.close());

    const input = {
      gcs: {
        'bucket-name': 'src',
        credentials: { 'storage-url': 'gs://src' },
        'object-names': ['in/'],
        preprocessors: ['extension'],
      },
    };
    const outputs: Record<string, (round: number) => Record<string, unknown>> = {
      discard: () => ({ discard: {} }),
      file: (round) => ({
        file: { path: join(dir, `file-${round}`, 'out.ndjson'), 'max-file-size': '1GiB' },
      }),
      gcs: (round) => ({
        gcs: {
          'bucket-name': 'dst',
          'object-name': `r${round}/%Y%m%d/{part}.ndjson.gz`,
          compression: 'gzip',
        },
      }),
      pubsub: () => ({ pubsub: { topic: `projects/${PROJECT}/topics/bench-output` } }),
      'http-post': () => ({ 'http-post': { url: http.url } }),
    };
    const env = { ...process.env, STORAGE_EMULATOR_HOST: storage.url };
    // A cold emulator (a JVM) took 31 s for what it then took 13 s for: warm it, untimed.
    await runChild(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/pubsub-publisher.ts',
        `projects/${PROJECT}/topics/bench-plain`,
        String(Math.min(EVENTS, 300_000)),
      ],
      { env },
    );
    const only = process.env.BENCH_ONLY?.split(',');
    const rounds: Record<string, Measured>[] = [];
    for (let round = 0; round < RUNS; round++) {
      const measured: Record<string, Measured> = {};
      for (const [kind, output] of Object.entries(outputs)) {
        if (only && !only.includes(kind)) continue;
        mkdirSync(join(dir, `file-${round}`), { recursive: true });
        const jobFile = join(dir, `${kind}-${round}.json`);
        writeFileSync(jobFile, JSON.stringify({ name: `bench-${kind}`, input, output: output(round) }));
        const linesBefore = http.lines;
        const run = await runChild(
          process.execPath,
          ['bin/sluice.js', 'job', 'run', jobFile, '--state-dir', join(dir, `state-${kind}-${round}`)],
          { env },
        );
        const events = outputEvents(run, kind);
        if (events !== EVENTS)
          throw new Error(`${kind} wrote ${events} events, not ${EVENTS}:\n${run.stderr}`);
        if (kind === 'http-post' && http.lines - linesBefore !== EVENTS)
          throw new Error(`the server received ${http.lines - linesBefore} lines, not ${EVENTS}`);
        measured[kind] = { wallS: run.wallS, peakRssMb: run.peakRssMb, events };
        console.error(
          `  round ${round + 1} ${kind.padEnd(9)} ${rate(EVENTS, run.wallS)}  ${run.wallS.toFixed(2)} s  peak RSS ${run.peakRssMb.toFixed(0)} MB`,
        );
      }
      if (only && !only.includes('pubsub')) {
        rounds.push(measured);
        continue;
      }
      const plain = await runChild(
        process.execPath,
        [
          '--import',
          'tsx',
          'bench/pubsub-publisher.ts',
          `projects/${PROJECT}/topics/bench-plain`,
          String(EVENTS),
        ],
        { env },
      );
      measured['plain publisher'] = { wallS: plain.wallS, peakRssMb: plain.peakRssMb, events: EVENTS };
      console.error(
        `  round ${round + 1} plain publisher ${rate(EVENTS, plain.wallS)}  ${plain.wallS.toFixed(2)} s  peak RSS ${plain.peakRssMb.toFixed(0)} MB`,
      );
      rounds.push(measured);
    }

    const ratio = (a: string, b: string) =>
      rounds.filter((r) => r[a] && r[b]).map((r) => r[b]!.wallS / r[a]!.wallS);
    const gcsRatios = ratio('gcs', 'discard');
    const pubsubRatios = ratio('pubsub', 'plain publisher');
    const rows: string[][] = [];
    for (const kind of [...Object.keys(outputs), 'plain publisher']) {
      if (!rounds[0]![kind]) continue;
      const wallS = median(rounds.map((r) => r[kind]!.wallS));
      const peak = Math.max(...rounds.map((r) => r[kind]!.peakRssMb));
      let note = `${wallS.toFixed(2)} s process wall; peak RSS ${peak.toFixed(0)} MB (${peak < RSS_TARGET_MB ? 'ok' : 'OVER'}, target < ${RSS_TARGET_MB} MB)`;
      if (kind === 'gcs')
        note += `; gcs/discard = ${median(gcsRatios).toFixed(2)} (target ≥ 0.5; per round ${gcsRatios.map((r) => r.toFixed(2)).join(' / ')})`;
      if (kind === 'pubsub')
        note += `; pubsub/plain = ${median(pubsubRatios).toFixed(2)} (target ≥ 0.8; per round ${pubsubRatios.map((r) => r.toFixed(2)).join(' / ')})`;
      rows.push([
        kind === 'plain publisher' ? '  plain @google-cloud/pubsub publisher' : `gcs → ${kind}`,
        rate(EVENTS, wallS),
        note,
      ]);
    }
    const width = Math.max(...rows.map((r) => r[0]!.length));
    console.log(
      `\nbench:outputs: ${EVENTS} events (${(rawBytes / 1e6).toFixed(0)} MB NDJSON) in ${OBJECTS} gzip objects; median of ${RUNS}; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    for (const [what, figure, note] of rows)
      console.log(`${what!.padEnd(width)}  ${figure!.padEnd(14)}  ${note}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    // Retries: the storage emulator may still be closing files of the last run.
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

function rate(events: number, seconds: number): string {
  return `${(events / seconds / 1000).toFixed(0)}k events/s`;
}

/** The output's events from the run's `job-metrics` reports (`output: <kind>`). */
function outputEvents(run: ChildRun, kind: string): number {
  let events = 0;
  for (const line of run.stderr.split('\n')) {
    if (!line.startsWith('job-metrics ')) continue;
    const payload = JSON.parse(line.slice('job-metrics '.length)) as { output?: string; events?: number };
    if (payload.output === kind) events += payload.events ?? 0;
  }
  return events;
}

/** Writes the objects; returns the bytes of NDJSON they hold. */
function generate(folder: string): number {
  mkdirSync(folder, { recursive: true });
  let raw = 0;
  const perObject = Math.ceil(EVENTS / OBJECTS);
  for (let o = 0, i = 0; o < OBJECTS; o++) {
    const parts: string[] = [];
    for (let n = 0; n < perObject && i < EVENTS; n++) parts.push(benchLine(i++));
    const text = parts.join('');
    raw += text.length;
    writeFileSync(join(folder, `${String(o).padStart(2, '0')}.ndjson.gz`), gzipSync(text, { level: 6 }));
  }
  return raw;
}

/** An HTTP server that answers 200 to every POST and counts the NDJSON lines it received. */
async function countingServer(): Promise<{ url: string; lines: number; close(): Promise<void> }> {
  const state = { lines: 0 };
  const server = createServer((req: IncomingMessage, res) => {
    req.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) state.lines++;
    });
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/ingest`,
    get lines() {
      return state.lines;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

await main();
