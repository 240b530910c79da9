/**
 * `npm run bench:events`: reading recent events from a busy log, as a user meets it. A
 * tenant whose last 24 hours hold BENCH_EVENTS (50,000) events, a tenth of them one job's
 * `job-metrics` reports, written straight into the Firestore emulator (started here unless
 * FIRESTORE_EMULATOR_HOST is set); then, each BENCH_RUNS (5) times, the whole `sluice`
 * process (`node bin/sluice.js`) against the API served as in the local stack, counting
 * the API's requests:
 *   - `events ls` (the newest 100), `events ls --limit 5000`, `events ls --job busy`;
 *   - `job get busy` (its output metrics: the day's reports).
 * Prints the median wall time and the requests of each.
 *
 * @example
 *   BENCH_EVENTS=20000 npm run bench:events
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { buildEvent, eventsCollection, storedEvent } from '../functions/events/event-log.ts';
import { serveTestApp, testApp } from '../test/helpers/app.ts';
import { bootstrapTestAdmin } from '../test/helpers/auth.ts';
import { googleEmulators } from './emulators.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const DAY = 24 * 3_600_000;

await googleEmulators();
const t = await testApp();
const token = await bootstrapTestAdmin(t);
let requests = 0;
// The served app, counting the event log's requests.
const fetch: typeof t.app.fetch = (request, ...rest) => {
  if (new URL(request.url).pathname === '/api/events') requests++;
  return t.app.fetch(request, ...rest);
};
const server = await serveTestApp({ ...t, app: { fetch } as typeof t.app });

try {
  const db = await t.deps.clients.firestore();
  const yaml = 'name: busy\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  print: {}\n';
  const saved = await t.request('/api/jobs/busy', {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/yaml' },
    body: yaml,
  });
  if (saved.status !== 201) throw new Error(`saving the job: ${saved.status} ${await saved.text()}`);
  console.error(`writing ${EVENTS} events over the last 24 h`);
  const writer = db.bulkWriter();
  const start = Date.now() - DAY + 60_000;
  for (let i = 0; i < EVENTS; i++) {
    const at = new Date(start + Math.floor((i * (DAY - 120_000)) / EVENTS));
    const event =
      i % 10 === 0
        ? buildEvent(
            {
              type: 'job-metrics',
              source: 'job',
              worker: 'w1',
              job: 'busy',
              payload: { output: 'print', events: 10, bytes: 100, batches: 1, retries: 0, failures: 0 },
            },
            at,
          )
        : buildEvent(
            { type: 'job-errors', source: 'job', worker: 'w1', job: `other-${i % 7}`, payload: { i } },
            at,
          );
    void writer.set(eventsCollection(db, 'default').doc(event.id), storedEvent(event));
  }
  await writer.close();

  const cli = (args: string[]) =>
    promisify(execFile)(process.execPath, ['bin/sluice.js', ...args], {
      env: {
        ...process.env,
        SLUICE_SERVER: server.url,
        SLUICE_TOKEN: token,
        SLUICE_CONFIG_DIR: '/nonexistent-sluice-config',
      },
      maxBuffer: 256 * 1024 * 1024,
    });
  await cli(['whoami']); // builds the CLI bundle if a source changed
  const cases: [string, string[]][] = [
    ['events ls', ['events', 'ls', '-o', 'json']],
    ['events ls --limit 5000', ['events', 'ls', '--limit', '5000', '-o', 'json']],
    ['events ls --job busy', ['events', 'ls', '--job', 'busy', '-o', 'json']],
    ['job get busy (output metrics)', ['job', 'get', 'busy', '-o', 'json']],
  ];
  console.log(
    `${EVENTS} events in the last 24 h; medians of ${RUNS}; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  for (const [name, args] of cases) {
    const times: number[] = [];
    let asked = 0;
    for (let r = 0; r < RUNS; r++) {
      requests = 0;
      const began = performance.now();
      await cli(args);
      times.push(performance.now() - began);
      asked = requests;
    }
    times.sort((a, b) => a - b);
    console.log(
      `  ${name.padEnd(32)} ${times[Math.floor(RUNS / 2)]!.toFixed(0).padStart(6)} ms  ${String(asked).padStart(4)} requests to /api/events`,
    );
  }
} finally {
  await server.close();
  await t.close();
}
process.exit(0);
