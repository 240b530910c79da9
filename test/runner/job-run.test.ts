import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { parseJobYaml } from '../../shared/job/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-job-run-'));
let server: Server;
let base: string;
let hits = 0;
let gcs: StorageEmulator;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end(
      req.url === '/list'
        ? JSON.stringify([{ id: 1 }, { id: 2 }])
        : JSON.stringify({ status: 'ok', path: req.url }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gcs = await startStorageEmulator();
});
afterAll(async () => {
  server.close();
  await gcs.stop();
});

function run(args: string[], env: NodeJS.ProcessEnv = {}, stopAfterLines?: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/sluice.js', 'job', 'run', ...args], {
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stopAfterLines && stdout.split('\n').length > stopAfterLines) child.kill('SIGINT');
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function job(name: string, text: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

describe('sluice job run', () => {
  it('runs a trigger-less http-poll job once: events on stdout, reports on stderr', async () => {
    const file = job(
      'once',
      `name: once\ninput:\n  http-poll:\n    url: '{{base}}/list'\n    json: true\noutput:\n  print: {}\n`,
    );
    const r = await run([file, '--context', `base=${base}`, '--state-dir', join(dir, 'state')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"id":1}\n{"id":2}\n');
    expect(r.stderr).toContain('job-run-ended');
  });

  it('keeps polling on an interval until Ctrl-C', async () => {
    const file = job(
      'every',
      `name: every\ninput:\n  http-poll:\n    url: ${base}/tick\n    json: true\n    trigger:\n      interval:\n        duration: 100ms\noutput:\n  print: {}\n`,
    );
    const before = hits;
    const r = await run([file, '--state-dir', join(dir, 'state')], {}, 3);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect(hits - before).toBeGreaterThanOrEqual(3);
  });

  it('refuses a job file without references, each error at its line and column as the saved level words it', async () => {
    const text = `name: wrong\ninput:\n  http-poll:\n    url: ${base}/list\n    json: maybe\n    trigger:\n      interval:\n        duration: 5 parsecs\noutput:\n  print: {}\n`;
    const file = job('wrong', text);
    const saved = parseJobYaml(text, { level: 'saved' });
    expect(saved.ok).toBe(false);
    const hitsBefore = hits;
    const r = await run([file, '--state-dir', join(dir, 'state')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file} is not a valid job`);
    for (const e of saved.ok ? [] : saved.errors)
      expect(r.stderr).toContain(`${file}:${e.line}:${e.column}: ${e.path}: ${e.message}`);
    expect(hits).toBe(hitsBefore);
  });

  it('takes a reference where a value of another type is asked, and runs with the value given', async () => {
    // Checked at the rendered level before rendering, '{{as-json}}' would be refused as not true or false.
    const file = job(
      'typed',
      `name: typed\ninput:\n  http-poll:\n    url: ${base}/list\n    json: '{{as-json}}'\noutput:\n  print: {}\n`,
    );
    const r = await run([file, '--context', 'as-json=true', '--state-dir', join(dir, 'state')]);
    expect(r.stderr).not.toContain('not a valid job');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"id":1}\n{"id":2}\n');
  });

  it('says which context key is missing and exits 1', async () => {
    const file = job(
      'missing',
      `name: missing\ninput:\n  http-poll:\n    url: 'http://{{host}}/'\noutput:\n  print: {}\n`,
    );
    const r = await run([file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('input.http-poll.url: missing context key `host`');
  });

  it('reads a bucket through STORAGE_EMULATOR_HOST, and a second run with fingerprints reads nothing', async () => {
    const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-run' });
    const [bucket] = await storage.createBucket('run-bucket');
    await bucket.file('logs/a.ndjson').save('{"n":1}\n{"n":2}\n', { resumable: false });
    const file = job(
      'bucket',
      'name: bucket\ninput:\n  gcs:\n    bucket-name: run-bucket\n    credentials:\n      storage-url: gs://run-bucket\n    object-names: [logs/]\n    fingerprinting: true\n    object-name-field: object\noutput:\n  print: {}\n',
    );
    const env = { STORAGE_EMULATOR_HOST: gcs.url };
    const first = await run([file, '--state-dir', join(dir, 'gcs-state')], env);
    expect(first.stderr).toContain('"errors":0');
    expect(first.code).toBe(0);
    expect(
      first.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { n: 1, object: 'logs/a.ndjson' },
      { n: 2, object: 'logs/a.ndjson' },
    ]);
    const second = await run([file, '--state-dir', join(dir, 'gcs-state')], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('');
  });
});
