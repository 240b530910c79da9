/**
 * The print output's job-metrics `bytes` is what `sluice job run` wrote to stdout, whether
 * the objects were read on read threads (whose buffers go back to the thread once written)
 * or on the main thread.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-print-bytes-'));
let gcs: StorageEmulator;
let jobFile: string;

beforeAll(async () => {
  gcs = await startStorageEmulator();
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-print-bytes' });
  const [bucket] = await storage.createBucket('print-bytes');
  const lines = (from: number, count: number) =>
    Array.from(
      { length: count },
      (_, i) => `${JSON.stringify({ n: from + i, msg: 'é'.repeat(i % 50) })}\n`,
    ).join('');
  await bucket.file('logs/a.ndjson').save(lines(0, 5000), { resumable: false });
  await bucket.file('logs/b.ndjson.gz').save(gzipSync(lines(5000, 5000)), { resumable: false });
  jobFile = join(dir, 'job.yaml');
  writeFileSync(
    jobFile,
    'name: print-bytes\ninput:\n  gcs:\n    bucket-name: print-bytes\n    credentials:\n      storage-url: gs://print-bytes\n    object-names: [logs/]\n    preprocessors: [extension]\noutput:\n  print: {}\n',
  );
});
afterAll(async () => {
  await gcs?.stop();
});

function run(env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: Buffer; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/sluice.js', 'job', 'run', jobFile], {
      env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.url, ...env },
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
  });
}

/** The print output's line of job-metrics on stderr. */
function printMetrics(stderr: string): { events: number; bytes: number } {
  const line = stderr.split('\n').find((l) => l.startsWith('job-metrics {"output":"print"'));
  if (!line) throw new Error(`no print metrics in:\n${stderr}`);
  return JSON.parse(line.slice('job-metrics '.length));
}

describe('print job-metrics', () => {
  it.each([
    ['on read threads', '2'],
    ['on the main thread', '0'],
  ])('counts the bytes written to stdout, objects read %s', async (_, threads) => {
    const r = await run({ SLUICE_READ_THREADS: threads });
    expect(r.code).toBe(0);
    expect(r.stdout.toString().trim().split('\n')).toHaveLength(10_000);
    expect(printMetrics(r.stderr)).toMatchObject({ events: 10_000, bytes: r.stdout.length });
  });
});
