/**
 * `sluice job get` and `sluice job ls` show a job's output kind and what it delivered in
 * the last 24 hours, summed from the `job-metrics` events its runs reported (written here
 * as a worker's telemetry writes them: source `job`, with the worker and job).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appendEvent, buildEvent, eventsCollection, storedEvent } from '../../functions/events/event-log.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), 'sluice-job-metrics-cli-'));

const JOBS = {
  copy: 'name: copy\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  gcs:\n    bucket-name: out-bucket\n    object-name: "x/{part}.ndjson"\n',
  idle: 'name: idle\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  discard: {}\n',
};

const run = (events: number, extra: Record<string, number> = {}) => ({
  type: 'job-metrics' as const,
  source: 'job' as const,
  worker: 'w1',
  job: 'copy',
  payload: { output: 'gcs', events, bytes: events * 10, batches: 2, retries: 0, failures: 0, ...extra },
});

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  for (const [name, yaml] of Object.entries(JOBS)) {
    writeFileSync(join(dir, `${name}.yaml`), yaml);
    expect((await runCli(['job', 'apply', join(dir, `${name}.yaml`)], { env })).code).toBe(0);
  }
  const db = await t.deps.clients.firestore();
  await appendEvent(db, 'default', run(1200));
  await appendEvent(db, 'default', run(300, { retries: 2, failures: 1 }));
  // The input's own report of the run, and a report of two days ago: neither is counted.
  await appendEvent(db, 'default', { ...run(0), payload: { input: 'gcs', events: 999 } });
  // Its id is written out: this process's own ids never run backwards.
  const made = new Date(Date.now() - 48 * 3_600_000);
  const old = {
    ...buildEvent(run(5000), made),
    id: `${made.toISOString().replace(/[-:.TZ]/g, '')}-0000old0`,
  };
  await eventsCollection(db, 'default').doc(old.id).set(storedEvent(old));
});
afterAll(async () => {
  await server.close();
  await t.close();
});

it('job get shows the output kind and its summed metrics', async () => {
  const got = await runCli(['job', 'get', 'copy', '-o', 'json'], { env });
  expect(got.code, got.stderr).toBe(0);
  const output = JSON.parse(got.stdout).output;
  expect(output).toMatchObject({
    kind: 'gcs',
    window: 'last 24 h',
    metrics: { events: 1500, bytes: 15000, batches: 4, retries: 2, failures: 1, runs: 2 },
  });
  const table = await runCli(['job', 'get', 'copy'], { env });
  expect(table.stdout).toMatch(/output:\n\s+kind: gcs\n\s+window: last 24 h\n\s+metrics:\n\s+events: 1500/);
});

it('job ls shows each job’s output kind and metrics, "-" for one that never ran', async () => {
  const ls = await runCli(['job', 'ls'], { env });
  expect(ls.code, ls.stderr).toBe(0);
  expect(ls.stdout).toMatch(/OUTPUT\s+OUTPUT_METRICS/);
  expect(ls.stdout).toMatch(/copy\s+1\s+saved\s+.*gcs\s+1500 events, 4 batches, 2 retries, 1 failures/);
  expect(ls.stdout).toMatch(/idle\s+1\s+saved\s+.*discard\s+-/);
  const json = JSON.parse((await runCli(['job', 'ls', '-o', 'json'], { env })).stdout);
  expect(json.find((j: { name: string }) => j.name === 'idle')).toMatchObject({
    output: 'discard',
    output_metrics: null,
  });
});
