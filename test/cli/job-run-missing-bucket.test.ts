/**
 * `sluice job run FILE` with a `gcs` input whose bucket does not exist: the storage API answers
 * the listing 404, and the CLI exits 4 (not found, cli/exit-codes.ts), naming the bucket, the
 * field of FILE that names it and what to check next. Other failures keep exit 1, and an
 * object that is missing is still a per-object `job-errors` report in a run that goes on
 * (exit 0). The real executable, `bin/sluice.js`, against the project's storage emulator.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-run-no-bucket-'));
let gcs: StorageEmulator;

beforeAll(async () => {
  gcs = await startStorageEmulator({ port: 0 });
});
afterAll(async () => {
  await gcs.stop();
});

type Json = Record<string, unknown>;
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Payloads of the `job-errors` reports on standard error. */
  errors: Json[];
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++counter}`;

async function bucketWith(emulator: StorageEmulator, objects: Record<string, string>): Promise<string> {
  const storage = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-no-bucket' });
  const name = unique('present');
  await storage.createBucket(name);
  for (const [object, data] of Object.entries(objects))
    await storage.bucket(name).file(object).save(data, { resumable: false });
  return name;
}

/** A job file whose gcs input reads `bucket` (a name, or a `{{key}}` reference) with `fields`. */
function jobFile(name: string, bucket: string, fields: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}\ninput:\n  gcs:\n    bucket-name: '${bucket}'\n    credentials:\n      storage-url: 'gs://${bucket}'\n${fields}output:\n  print: {}\n`,
  );
  return file;
}

function jobRun(file: string, emulator: StorageEmulator, ...context: string[]): Promise<Run> {
  const args = [
    join(root, 'bin/sluice.js'),
    'job',
    'run',
    file,
    '--state-dir',
    mkdtempSync(join(dir, 'state-')),
  ];
  if (context.length) args.push('--context', ...context);
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, STORAGE_EMULATOR_HOST: emulator.url },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const errors = stderr
        .split('\n')
        .filter((line) => line.startsWith('job-errors '))
        .map((line) => JSON.parse(line.slice('job-errors '.length)) as Json);
      resolve({ code, stdout, stderr, errors });
    }),
  );
}

describe.concurrent('sluice job run: a gcs bucket that does not exist', { timeout: 60_000 }, () => {
  it('exits 4, naming the bucket, its field in FILE and what to check', async () => {
    const bucket = unique('missing');
    const name = unique('no-bucket');
    const file = jobFile(name, bucket, '    object-names: []\n');
    const r = await jobRun(file, gcs);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    // The run's report is as before: one job-errors without an object, with the 404.
    expect(r.errors).toEqual([
      expect.objectContaining({ input: 'gcs', bucket, status: 404, transient: false }),
    ]);
    expect(r.errors[0]).not.toHaveProperty('object');
    expect(r.stderr).toContain(
      `error: job ${name} failed: bucket \`${bucket}\` not found (the storage API answered 404 to listing it)\n`,
    );
    expect(r.stderr).toContain(`${file}:4:18: input.gcs.bucket-name: bucket \`${bucket}\` not found\n`);
    expect(r.stderr).toContain(`STORAGE_EMULATOR_HOST=${gcs.url}`);
    expect(r.stderr).toMatch(/check the bucket name/i);
  });

  it('says which context key brought the bucket name in', async () => {
    const bucket = unique('missing');
    const name = unique('no-bucket-context');
    const file = jobFile(name, '{{bucket}}', '    object-names: [logs/]\n');
    const r = await jobRun(file, gcs, `bucket=${bucket}`);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      `${file}:4:18: input.gcs.bucket-name: bucket \`${bucket}\` not found (from context key \`bucket\`)\n`,
    );
  });

  it('keeps a missing object a per-object report: the run goes on and exits 0', async () => {
    const bucket = await bucketWith(gcs, { 'a.json': '{"n":1}\n' });
    const file = jobFile(
      unique('named'),
      bucket,
      '    mode: download-objects\n    object-names: [missing.json, a.json]\n',
    );
    const r = await jobRun(file, gcs);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"n":1}\n');
    expect(r.errors).toEqual([expect.objectContaining({ bucket, object: 'missing.json', status: 404 })]);
    expect(r.stderr).not.toContain('not found');
  });

  it('keeps objects that vanish between listing and download per-object reports (exit 0)', async () => {
    const emulator = await startStorageEmulator({ port: 0 });
    try {
      const bucket = await bucketWith(emulator, { 'a.json': '{"n":1}\n', 'b.json': '{"n":2}\n' });
      emulator.setFaults({ deleteAfterListRate: 1 });
      const file = jobFile(unique('vanished'), bucket, '    object-names: []\n');
      const r = await jobRun(file, emulator);
      expect(r.code).toBe(0);
      expect(r.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ object: 'a.json', status: 404 }),
          expect.objectContaining({ object: 'b.json', status: 404 }),
        ]),
      );
      expect(r.stderr).not.toContain('not found');
    } finally {
      await emulator.stop();
    }
  });

  it('keeps exit 1 for a listing that fails otherwise (503)', async () => {
    const emulator = await startStorageEmulator({ port: 0 });
    try {
      const bucket = await bucketWith(emulator, { 'a.json': '{"n":1}\n' });
      emulator.setFaults({ errorRate: 1, errorStatus: 503 });
      const name = unique('unavailable');
      const file = jobFile(
        name,
        bucket,
        '    object-names: []\n    retry:\n      timeout: 5s\n      retries: 0\n',
      );
      const r = await jobRun(file, emulator);
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([expect.objectContaining({ status: 503 })]);
      expect(r.stderr).toMatch(new RegExp(`^error: job ${name} failed: injected fault$`, 'm'));
    } finally {
      await emulator.stop();
    }
  });
});
