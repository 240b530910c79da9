/**
 * The `file` output in a temp folder: NDJSON appended, rotation by size; for a deployed
 * job, only below the worker's data folder (no absolute path, no `..`, no symbolic link
 * out of it, nothing without a data folder); refused on the cloud worker and, at the
 * stored level, for absolute paths.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cloudWorkerProblems } from '../../shared/job/cloud-worker-rules.ts';
import { validateJob } from '../../shared/job/validate.ts';
import { runDefinition } from './helpers.ts';
import { eventSource, pollOf } from './http-source.ts';

let source: Awaited<ReturnType<typeof eventSource>>;
beforeAll(async () => {
  source = await eventSource(1000);
});
afterAll(() => source.close());

const fileJob = (path: string, extra: Record<string, unknown> = {}) => ({
  name: 'to-file',
  input: pollOf(source.url),
  output: { file: { path, ...extra } },
});

it('appends NDJSON and rotates the file by size', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-file-'));
  const path = join(dir, 'out', 'events.ndjson');
  const first = await runDefinition(fileJob(path, { 'max-file-size': '20KiB' }));
  expect(first.error).toBeUndefined();
  const second = await runDefinition(fileJob(path, { 'max-file-size': '20KiB' }));
  expect(second.error).toBeUndefined();
  const files = readdirSync(join(dir, 'out'));
  expect(files.length).toBeGreaterThan(1);
  expect(files.filter((f) => /^events\.ndjson\.\d+$/.test(f)).length).toBe(files.length - 1);
  const events = files.flatMap((f) =>
    readFileSync(join(dir, 'out', f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { i: number }),
  );
  expect(events).toHaveLength(2000);
  expect(second.metrics[0]).toMatchObject({ output: 'file', events: 1000, failures: 0 });
});

it('a deployed job writes only below the worker data folder', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-data-'));
  const ok = await runDefinition(fileJob('jobs/a.ndjson'), { stored: true, dataDir });
  expect(ok.error).toBeUndefined();
  expect(readFileSync(join(dataDir, 'jobs/a.ndjson'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1000);

  const outside = mkdtempSync(join(tmpdir(), 'sluice-outside-'));
  const absolute = await runDefinition(fileJob(join(outside, 'x.ndjson')), { stored: true, dataDir });
  expect(absolute.error?.message).toMatch(/relative to the worker data folder/);
  const climbing = await runDefinition(fileJob('../x.ndjson'), { stored: true, dataDir });
  expect(climbing.error?.message).toMatch(/may not climb out/);
  mkdirSync(join(dataDir, 'links'));
  symlinkSync(outside, join(dataDir, 'links', 'out'));
  const linked = await runDefinition(fileJob('links/out/x.ndjson'), { stored: true, dataDir });
  expect(linked.error?.message).toMatch(/leads out of the worker data folder/);
  expect(readdirSync(outside)).toEqual([]);
  const noDataDir = await runDefinition(fileJob('jobs/a.ndjson'), { stored: true });
  expect(noDataDir.error?.message).toMatch(/--data-dir/);
});

it('the stored level refuses an absolute path; the cloud worker refuses the file output', () => {
  const stored = validateJob(fileJob('/etc/cron.d/x'), { level: 'stored' });
  expect(stored.ok).toBe(false);
  if (!stored.ok) expect(stored.errors[0]).toMatchObject({ path: 'output.file.path' });
  expect(validateJob(fileJob('out/x.ndjson'), { level: 'stored' }).ok).toBe(true);
  expect(cloudWorkerProblems(fileJob('out/x.ndjson'))).toEqual([
    expect.objectContaining({ path: 'output.file' }),
  ]);
  expect(cloudWorkerProblems({ input: {}, output: { pubsub: { topic: 't' } } }).map((p) => p.path)).toEqual([
    'output.pubsub.credentials',
  ]);
  expect(
    cloudWorkerProblems({ output: { gcs: { credentials: { 'service-account': { path: '/k.json' } } } } }).map(
      (p) => p.path,
    ),
  ).toEqual(['output.gcs.credentials.service-account.path']);
});

it('object-name needs {part}; unknown tokens are named', () => {
  const job = (name: string) => ({
    name: 'n',
    input: pollOf('http://127.0.0.1/'),
    output: { gcs: { 'bucket-name': 'bkt', 'object-name': name } },
  });
  const missing = validateJob(job('logs/%Y/x.ndjson'), { level: 'rendered' });
  expect(missing.ok ? [] : missing.errors.map((e) => e.message)).toEqual([expect.stringContaining('{part}')]);
  const bad = validateJob(job('logs/%Q/{part}'), { level: 'rendered' });
  expect(bad.ok ? [] : bad.errors.map((e) => e.message)).toEqual([expect.stringContaining('%Q')]);
  expect(validateJob(job('logs/{{job}}-{part}'), { level: 'saved' }).ok).toBe(true);
});
