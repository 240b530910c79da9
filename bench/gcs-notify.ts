/**
 * `npm run bench:gcs:notify`: a `gcs` input with `notifications` as a user runs it:
 * `sluice job run` (a process of its own, `print` output read line by line) on a job
 * without a trigger, set up by `sluice gcs notify`, against the project's storage emulator
 * and Google's Pub/Sub emulator (started here unless PUBSUB_EMULATOR_HOST is set).
 *
 * 1. 100 objects exist before the job starts: its first run lists them once (backfill).
 * 2. BENCH_OBJECTS (default 10,000) objects are uploaded while the job runs, 8 at a time;
 *    each holds its upload time. Measured: every object printed once, the list requests
 *    after the backfill (target 0), and upload → printed latency (target p99 < 2 s).
 * 3. The job is stopped (SIGINT) and started again on the same state: the re-scan of the
 *    notified bucket makes 0 list requests and reads no fingerprint of the objects it read
 *    (it gets no notification for them), so it prints nothing.
 *
 * @example
 *   BENCH_OBJECTS=2000 npm run bench:gcs:notify
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Storage } from '@google-cloud/storage';
import { startStorageEmulator } from '../local/storage-emulator/index.ts';
import { pubsubEmulator } from './emulators.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 10_000);
const BEFORE = 100;
const PROJECT = 'bench-notify';
const UPLOADERS = 8;

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-notify-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    stops.push(await pubsubEmulator());
    const pubsubHost = process.env.PUBSUB_EMULATOR_HOST!;
    const emulator = await startStorageEmulator({ port: 0 });
    stops.push(() => emulator.stop());
    // No metadata server beside the emulators: google-auth need not look for one, here
    // (the uploads' client warned when its lookup failed) or in the processes started below.
    process.env.METADATA_SERVER_DETECTION = 'none';
    const storage = new Storage({ apiEndpoint: emulator.url, projectId: PROJECT });
    await storage.createBucket('landing');
    const bucket = storage.bucket('landing');
    const env = { ...process.env, STORAGE_EMULATOR_HOST: emulator.url, PUBSUB_EMULATOR_HOST: pubsubHost };

    const setup = await runToEnd(
      ['bin/sluice.js', 'gcs', 'notify', 'landing', '--job', 'orders', '--project', PROJECT, '-o', 'json'],
      env,
    );
    const subscription = (JSON.parse(setup) as { subscription: string }).subscription;
    for (let i = 0; i < BEFORE; i++) await bucket.file(`orders/before-${i}.json`).save(line(i));

    const jobFile = join(dir, 'orders.json');
    writeFileSync(
      jobFile,
      JSON.stringify({
        name: 'orders',
        input: {
          gcs: {
            'bucket-name': 'landing',
            credentials: { 'storage-url': 'gs://landing' },
            'object-names': ['orders/'],
            'object-name-field': 'object',
            fingerprinting: true,
            notifications: { subscription },
          },
        },
        output: { print: {} },
      }),
    );
    const state = join(dir, 'state');

    // 1 and 2: the backfill, then uploads while the job runs.
    const printed = new Map<string, number>();
    let duplicates = 0;
    const job = startJob(jobFile, state, env, (event) => {
      const name = String(event.object);
      if (printed.has(name)) duplicates++;
      printed.set(name, Date.now() - Number(event.t));
    });
    await until(() => printed.size >= BEFORE, 60_000, 'the backfill');
    emulator.resetStats();
    console.error(`backfill done (${BEFORE} objects); uploading ${OBJECTS} objects while the job runs`);
    const uploadStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: UPLOADERS }, async () => {
        while (next < OBJECTS) {
          const i = next++;
          await bucket.file(`orders/live-${i}.json`).save(line(i), { resumable: false });
        }
      }),
    );
    const uploadS = (performance.now() - uploadStart) / 1000;
    await until(() => printed.size >= BEFORE + OBJECTS, 120_000, 'every object printed');
    const drainedS = (performance.now() - uploadStart) / 1000;
    const liveLists = emulator.stats().list;
    const ended = await stopJob(job.child);
    const latencies = [...printed.entries()]
      .filter(([name]) => name.includes('live-'))
      .map(([, ms]) => ms)
      .sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;

    // 3: a restart on the same state: nothing to list, nothing to read again.
    emulator.resetStats();
    const again = startJob(jobFile, state, env, () => {
      duplicates++;
    });
    await until(() => again.started(), 30_000, 'the second run to start');
    const rescanEnded = await stopJob(again.child, 1500);
    const rescanLists = emulator.stats().list;

    console.log(
      `\nbench:gcs:notify (load average ${loadavg()[0]!.toFixed(1)}; ${OBJECTS} objects uploaded while running)`,
    );
    const rows: [string, string][] = [
      [
        'objects printed (backfill + uploaded)',
        `${printed.size} of ${BEFORE + OBJECTS}; duplicates ${duplicates}`,
      ],
      ['list requests after the backfill', `${liveLists} (target 0)`],
      [
        'upload → printed latency',
        `p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies.at(-1)} ms (target p99 < 2000)`,
      ],
      [
        'upload time, all objects printed after',
        `${uploadS.toFixed(1)} s, ${drainedS.toFixed(1)} s (${(OBJECTS / drainedS).toFixed(0)} objects/s)`,
      ],
      ['first run: notifications, skipped', `${ended.notifications}, ${JSON.stringify(ended.skipped)}`],
      [
        'restart: list requests, notifications, printed',
        `${rescanLists}, ${rescanEnded.notifications}, ${duplicates} (targets 0, 0, 0)`,
      ],
    ];
    const width = Math.max(...rows.map(([what]) => what.length));
    for (const [what, figure] of rows) console.log(`${what.padEnd(width)}  ${figure}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

function line(i: number): string {
  return `${JSON.stringify({ i, t: Date.now(), message: `order number ${i}` })}\n`;
}

function startJob(
  file: string,
  state: string,
  env: NodeJS.ProcessEnv,
  onEvent: (event: Record<string, unknown>) => void,
): { child: ChildProcess; started: () => boolean } {
  // BENCH_CPU_PROF=DIR: a CPU profile of each job process, to see where its time goes.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, 'bin/sluice.js', 'job', 'run', file, '--state-dir', state],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let started = false;
  createInterface({ input: child.stdout! }).on('line', (text) => onEvent(JSON.parse(text)));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.includes('job-run-started')) started = true;
  });
  (child as ChildProcess & { stderrText: () => string }).stderrText = () => stderr;
  return { child, started: () => started };
}

/** SIGINT after `afterMs`; the run's job-run-ended payload. */
async function stopJob(child: ChildProcess, afterMs = 0): Promise<Record<string, unknown>> {
  if (afterMs) await new Promise((resolve) => setTimeout(resolve, afterMs));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
  const stderr = (child as ChildProcess & { stderrText: () => string }).stderrText();
  const ended = stderr.split('job-run-ended').at(-1) ?? '';
  const json = ended.slice(ended.indexOf('{'), ended.lastIndexOf('}') + 1);
  try {
    return JSON.parse(json.split('\n')[0]!);
  } catch {
    return { unparsed: ended.slice(0, 300) };
  }
}

async function runToEnd(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}`);
  return out;
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

await main();
