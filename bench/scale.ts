/**
 * `npm run bench:scale`: the `cloud` worker scaled out, measured as a user meets it: the
 * local stack started the way the README says (`tsx local/main.ts`, as `npm start` does)
 * with `SLUICE_RUNNERS` = 1, 2 and 4 runner processes, each taking one request at a time
 * (`SLUICE_RUNNER_CONCURRENCY=1`, so the processes are what is compared), and BENCH_JOBS
 * (20) `gcs` jobs of BENCH_OBJECTS (50) objects each, deployed to `cloud` at once. Every
 * line carries its job, object and line number; the stack's output is read until each
 * has been printed, and counted: every line once (target), and the wall time from the
 * deploy to the last line (target: 4 runners ≤ 0.4 × 1 runner), which includes the wait
 * for the next tick (every 5 s), and from the first line to the last (the runs alone).
 *
 * BENCH_LATENCY_MS (default 100; 25 with `--shards`) makes the storage emulator wait that long before each
 * request it answers, as a real bucket does (first byte of an object, a listing page):
 * runs then wait on storage, as they do in the cloud. With little latency the runners only
 * compete for this machine's two cores with the emulators (the Firestore emulator takes
 * most of one), and more runners gain little.
 * BENCH_RUNNERS picks the counts.
 *
 * `npm run bench:scale -- --shards`: one job over 20,000 objects (one line each), which its
 * run reads in parts of 1,000 (SLUICE_SHARD_OBJECTS) handed to the other runners; 1 runner
 * against 2 (target: 2 finish at least 1.6 x faster), every line once, and the run's one
 * `job-run-ended` with the totals of its parts.
 *
 * @example
 *   BENCH_JOBS=10 BENCH_RUNNERS=1,4 npm run bench:scale
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStackProcess } from '../test/helpers/stack-process.ts';

/** `--shards`: one job over 20,000 objects, read in parts (SLUICE_SHARD_OBJECTS, 1,000) by 1 and 2 runners. */
const SHARDS = process.argv.includes('--shards');
const JOBS = Number(process.env.BENCH_JOBS ?? (SHARDS ? 1 : 20));
const OBJECTS = Number(process.env.BENCH_OBJECTS ?? (SHARDS ? 20_000 : 50));
const LINES = Number(process.env.BENCH_LINES ?? (SHARDS ? 1 : 20));
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? (SHARDS ? 25 : 100));
const RUNNERS = (process.env.BENCH_RUNNERS ?? (SHARDS ? '1,2' : '1,2,4')).split(',').map(Number);
const PASSWORD = 'bench-scale-password-1';
// A service-account key in form only: the storage emulator does not check signatures.
const KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'bench',
  client_email: 'reader@bench.iam.gserviceaccount.com',
  private_key:
    '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n',
});

interface Measured {
  runners: number;
  seconds: number;
  /** First line printed to the last: the runs, without the wait for the tick. */
  runS: number;
  printed: number;
  duplicates: number;
  startupS: number;
  ended: string;
}

async function measure(runners: number): Promise<Measured> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-scale-'));
  for (let j = 0; j < JOBS; j++) {
    const dir = join(dataDir, 'gcs', 'scale', `job-${j}`);
    mkdirSync(dir, { recursive: true });
    for (let o = 0; o < OBJECTS; o++) {
      const lines = Array.from({ length: LINES }, (_, l) => JSON.stringify({ j, o, l })).join('\n');
      writeFileSync(join(dir, `o-${String(o).padStart(4, '0')}.json`), `${lines}\n`);
    }
  }
  const started = performance.now();
  const stack = await startStackProcess(dataDir, {
    SLUICE_RUNNERS: String(runners),
    SLUICE_RUNNER_CONCURRENCY: '1',
    SLUICE_TENANT_RUN_CAP: '8',
    SLUICE_ADMIN_PASSWORD: PASSWORD,
    SLUICE_LOG_FORMAT: 'json',
    METADATA_SERVER_DETECTION: 'none',
    SLUICE_STORAGE_EMULATOR_LATENCY_MS: String(LATENCY_MS),
  });
  const startupS = (performance.now() - started) / 1000;
  try {
    const token = await login(stack.url);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${stack.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      });
    for (let j = 0; j < JOBS; j++) {
      const job = {
        name: `scale-${j}`,
        input: {
          gcs: {
            'bucket-name': 'scale',
            credentials: { 'storage-url': 'gs://scale', 'service-account': { key: KEY } },
            'object-names': [`job-${j}/`],
            fingerprinting: true,
          },
        },
        output: { print: {} },
      };
      const saved = await api(`/api/jobs/scale-${j}`, { method: 'PUT', body: JSON.stringify(job) });
      if (saved.status >= 300) throw new Error(`saving scale-${j}: ${saved.status} ${await saved.text()}`);
    }
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: JOBS }, async (_, j) => {
        const res = await api(`/api/jobs/scale-${j}/deploy`, {
          method: 'POST',
          body: JSON.stringify({ workers: ['cloud'] }),
        });
        if (res.status !== 200) throw new Error(`deploying scale-${j}: ${res.status} ${await res.text()}`);
      }),
    );
    const total = JOBS * OBJECTS * LINES;
    const seen = new Map<string, number>();
    let scanned = 0;
    let lastAt = t0;
    let firstAt = 0;
    const deadline = Date.now() + 600_000;
    while (seen.size < total) {
      if (Date.now() > deadline) throw new Error(`only ${seen.size} of ${total} lines printed in 10 minutes`);
      await new Promise((r) => setTimeout(r, 50));
      const out = stack.output();
      const end = out.lastIndexOf('\n');
      if (end <= scanned) continue;
      for (const line of out.slice(scanned, end).split('\n')) {
        const m = /^\{"j":(\d+),"o":(\d+),"l":(\d+)/.exec(line);
        if (!m) continue;
        const key = `${m[1]}/${m[2]}/${m[3]}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        lastAt = performance.now();
        firstAt ||= lastAt;
      }
      scanned = end + 1;
    }
    // A moment more: a line printed twice would show now.
    await new Promise((r) => setTimeout(r, 2_000));
    for (const line of stack.output().slice(scanned).split('\n')) {
      const m = /^\{"j":(\d+),"o":(\d+),"l":(\d+)/.exec(line);
      if (m) seen.set(`${m[1]}/${m[2]}/${m[3]}`, (seen.get(`${m[1]}/${m[2]}/${m[3]}`) ?? 0) + 1);
    }
    const printed = [...seen.values()].reduce((a, b) => a + b, 0);
    // The runs' job-run-ended events: one per job, with the totals of its parts.
    await new Promise((r) => setTimeout(r, 1_000));
    const endedEvents = (
      (await (await api('/api/events?type=job-run-ended&limit=1000')).json()) as {
        events: { payload: { parts?: number; events?: number } }[];
      }
    ).events;
    const ended = `${endedEvents.length} job-run-ended, parts ${endedEvents.map((e) => e.payload.parts ?? 0).reduce((a, b) => a + b, 0)}, events ${endedEvents.map((e) => e.payload.events ?? 0).reduce((a, b) => a + b, 0)}`;
    return {
      runners,
      seconds: (lastAt - t0) / 1000,
      runS: (lastAt - firstAt) / 1000,
      printed,
      duplicates: printed - seen.size,
      startupS,
      ended,
    };
  } finally {
    await stack.stop('SIGINT');
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/api/tokens/create/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  if (res.status !== 201) throw new Error(`login: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

const results: Measured[] = [];
for (const n of RUNNERS) {
  console.error(`measuring with ${n} runner process(es)`);
  results.push(await measure(n));
}
const one = results.find((r) => r.runners === 1);
console.log(
  `\nbench:scale (${JOBS} jobs x ${OBJECTS} objects x ${LINES} lines deployed to cloud at once; storage latency ${LATENCY_MS} ms; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)})`,
);
for (const r of results) {
  const ratio = (a: number, b: number | undefined) => (b ? ` (${(a / b).toFixed(2)} x 1 runner)` : '');
  console.log(
    `  ${r.runners} runner(s): deploy -> last line ${r.seconds.toFixed(2)} s${ratio(r.seconds, one?.seconds)}, first -> last line ${r.runS.toFixed(2)} s${ratio(r.runS, one?.runS)}; printed ${r.printed} of ${JOBS * OBJECTS * LINES}, duplicates ${r.duplicates}; ${r.ended}; stack start ${r.startupS.toFixed(1)} s`,
  );
}
process.exit(0);
