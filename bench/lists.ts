/**
 * `npm run bench:lists`: the list endpoints at scale. A tenant with BENCH_JOBS (10,000)
 * jobs, a quarter of them deployed to some of BENCH_WORKERS (2,000) workers, written
 * straight into the Firestore emulator (started here unless FIRESTORE_EMULATOR_HOST is
 * set); then every page of `GET /api/jobs` and `GET /api/workers` (limit 1,000, and 100)
 * over HTTP from the API served as in the local stack. Target (issue 19): each page under
 * 200 ms on the emulator.
 *
 * @example
 *   BENCH_JOBS=2000 BENCH_WORKERS=500 npm run bench:lists
 */
import { loadavg } from 'node:os';
import { request } from 'undici';
import { tenantCollection } from '../functions/adapters/firestore-paths.ts';
import { NEXT_PAGE_HEADER } from '../shared/api/paging.ts';
import { serveTestApp, testApp } from '../test/helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../test/helpers/auth.ts';
import { googleEmulators } from './emulators.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 10_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2_000);

await googleEmulators();
const t = await testApp();
const admin = bearer(await bootstrapTestAdmin(t));
const server = await serveTestApp(t);

try {
  const db = await t.deps.clients.firestore();
  const now = new Date().toISOString();
  console.error(`writing ${WORKERS} workers and ${JOBS} jobs`);
  const writer = db.bulkWriter();
  // Each worker's record holds the jobs deployed to it, as deploy keeps it (workers/deployed-jobs.ts).
  const deployedTo = (j: number) => (j % 4 === 0 ? `w-${String(j % WORKERS).padStart(5, '0')}` : undefined);
  const jobsOf = new Map<string, string[]>();
  for (let j = 0; j < JOBS; j++) {
    const worker = deployedTo(j);
    if (worker) jobsOf.set(worker, [...(jobsOf.get(worker) ?? []), `job-${String(j).padStart(6, '0')}`]);
  }
  for (let w = 0; w < WORKERS; w++) {
    const id = `w-${String(w).padStart(5, '0')}`;
    void writer.set(tenantCollection(db, 'default', 'workers').doc(id), {
      id,
      labels: {},
      key_hash: 'x',
      key_version: 1,
      created_at: now,
      deployed_jobs: jobsOf.get(id) ?? [],
    });
  }
  const definition = JSON.stringify({
    name: 'x',
    input: { 'http-poll': { url: 'http://example.com' } },
    output: { print: {} },
  });
  for (let j = 0; j < JOBS; j++) {
    const name = `job-${String(j).padStart(6, '0')}`;
    const deployed = deployedTo(j);
    void writer.set(tenantCollection(db, 'default', 'jobs').doc(name), {
      name,
      version: 1,
      created_at: now,
      updated_at: now,
      definition_json: definition.replace('"x"', JSON.stringify(name)),
      deployments: deployed ? { [deployed]: { state: 'running', version: 1, updated_at: now } } : {},
    });
  }
  await writer.close();

  const rows: [string, string][] = [];
  // Twice over: the first pass meets the emulator cold (its first scans of the new data, and
  // this process's first requests), the second as a server that has been up a while.
  for (const [pass, path, limit] of [
    ['cold', '/api/jobs', 1000],
    ['cold', '/api/workers', 1000],
    ['warm', '/api/jobs', 1000],
    ['warm', '/api/jobs', 100],
    ['warm', '/api/workers', 1000],
    ['warm', '/api/workers', 100],
  ] as const) {
    const times: number[] = [];
    let token: string | undefined;
    let items = 0;
    do {
      const url = `${server.url}${path}?limit=${limit}${token ? `&page_token=${token}` : ''}`;
      const started = performance.now();
      const res = await request(url, { headers: admin });
      const page = (await res.body.json()) as unknown[];
      times.push(performance.now() - started);
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
      items += page.length;
      const next = res.headers[NEXT_PAGE_HEADER.toLowerCase()];
      token = typeof next === 'string' ? next : undefined;
    } while (token);
    times.sort((a, b) => a - b);
    rows.push([
      `${pass} ${path}?limit=${limit}`,
      `${times.length} pages, ${items} items; per page median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms, max ${times.at(-1)!.toFixed(0)} ms (target < 200 ms)`,
    ]);
  }
  console.log(`\nbench:lists (${JOBS} jobs, ${WORKERS} workers; load average ${loadavg()[0]!.toFixed(1)})`);
  const width = Math.max(...rows.map(([what]) => what.length));
  for (const [what, figure] of rows) console.log(`${what.padEnd(width)}  ${figure}`);
} finally {
  await server.close();
  await t.close();
}
process.exit(0);
