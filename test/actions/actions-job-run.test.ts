/**
 * Actions end to end through `sluice job run`: a real job file, a real `bin/sluice.js`
 * process against the project's Cloud Storage emulator; what a user sees on stdout (the
 * reshaped events) and stderr (`job-metrics` with the action counts, `job-errors` with
 * the action's index and field, and no event values).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-actions-'));
let gcs: StorageEmulator;

beforeAll(async () => {
  gcs = await startStorageEmulator({ port: 0 });
});
afterAll(async () => {
  await gcs.stop();
});

it('sluice job run applies the actions between input and output and reports their counts', {
  timeout: 120_000,
}, async () => {
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-actions' });
  await storage.createBucket('actions-1');
  const lines = [
    { status: 500, path: '/a', message: 'x', request_id: 'r1', ts: '10/Oct/2000:13:55:36 -0700' },
    { status: 200, path: '/b', message: 'y', request_id: 'r2', ts: '10/Oct/2000:13:55:36 -0700' },
    { status: 503, path: '/c', message: 'z', request_id: 'r3', ts: 'hunter2-not-a-time' },
    { status: 'oops', path: '/d' },
  ];
  await storage
    .bucket('actions-1')
    .file('logs/a.json')
    .save(lines.map((l) => JSON.stringify(l)).join('\n'), { resumable: false });
  const file = join(dir, 'job.yaml');
  writeFileSync(
    file,
    `name: errors-only
input:
  gcs:
    bucket-name: actions-1
    credentials: { storage-url: gs://actions-1 }
    object-names: [logs/]
actions:
  - filter: event.status >= 500
  - set: { http.route: '"GET " + event.path', by: job }
  - parse-timestamp: { field: ts, format: "%d/%b/%Y:%H:%M:%S %z" }
  - remove: [message]
  - rename: { request_id: id }
output:
  print: {}
`,
  );
  const child = spawn(
    process.execPath,
    [join(root, 'bin/sluice.js'), 'job', 'run', file, '--state-dir', join(dir, 'state')],
    {
      cwd: root,
      env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.url },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  expect(code, stderr).toBe(0);
  expect(
    stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
  ).toEqual([
    {
      status: 500,
      path: '/a',
      id: 'r1',
      ts: '2000-10-10T20:55:36.000Z',
      http: { route: 'GET /a' },
      by: 'errors-only',
    },
  ]);
  const reports = stderr
    .split('\n')
    .map((l) => /^([a-z-]+) (\{.*\})$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ type: m[1]!, payload: JSON.parse(m[2]!) }));
  const metrics = reports.find((r) => r.type === 'job-metrics' && r.payload.actions)?.payload.actions;
  expect(metrics).toMatchObject({ events_in: 4, events_out: 1, dropped_by_filter: 1, evaluation_errors: 2 });
  const errors = reports.filter((r) => r.type === 'job-errors').map((r) => r.payload);
  expect(errors).toEqual([
    expect.objectContaining({
      reason: 'action-evaluation-error',
      action: 2,
      kind: 'parse-timestamp',
      field: 'ts',
    }),
    expect.objectContaining({ reason: 'action-evaluation-error', action: 0, kind: 'filter' }),
  ]);
  expect(stderr).not.toContain('hunter2');
});
