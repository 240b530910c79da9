/**
 * The `gcs` output against the project's storage emulator: gcs → gcs with names from the
 * source (a re-run overwrites, never duplicates), gzip NDJSON parts cut by max-events,
 * json-array objects named by time tokens, fingerprints committed only after upload.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { runDefinition } from './helpers.ts';

let gcs: StorageEmulator;
let storage: Storage;
const SOURCE = 'out-src';
const TARGET = 'out-dst';
const LINES = 600;

beforeAll(async () => {
  gcs = await startStorageEmulator();
  process.env.STORAGE_EMULATOR_HOST = gcs.url;
  storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-outputs' });
  await storage.createBucket(SOURCE);
  await storage.createBucket(TARGET);
  for (const o of [0, 1, 2]) {
    const text = Array.from({ length: LINES }, (_, l) => `{"o":${o},"l":${l}}`).join('\n');
    await storage.bucket(SOURCE).file(`in/${o}.ndjson`).save(`${text}\n`, { resumable: false });
  }
});
afterAll(async () => {
  await gcs.stop();
});

const job = (output: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'to-gcs',
  input: {
    gcs: {
      'bucket-name': SOURCE,
      credentials: { 'storage-url': `gs://${SOURCE}` },
      'object-names': ['in/'],
      ...extra,
    },
  },
  output: { gcs: { 'bucket-name': TARGET, ...output } },
});

async function objects(prefix: string) {
  const [files] = await storage.bucket(TARGET).getFiles({ prefix });
  return files.map((f) => f.name).sort();
}

async function lines(name: string, gzipped: boolean): Promise<string[]> {
  const [bytes] = await storage.bucket(TARGET).file(name).download();
  return (gzipped ? gunzipSync(bytes) : bytes).toString().split('\n').filter(Boolean);
}

it('gcs → gcs names parts after the source object and generation, and a re-run overwrites them', async () => {
  const output = {
    'object-name': 'copy/{source}-{generation}-{part}.ndjson.gz',
    compression: 'gzip',
    'max-events': 250,
  };
  const first = await runDefinition(job(output));
  expect(first.error).toBeUndefined();
  const names = await objects('copy/');
  // 600 lines in parts of 250: three parts per source object.
  expect(names).toHaveLength(9);
  expect(
    names
      .filter((n) => n.startsWith('copy/in/0.ndjson-'))
      .map((n) => n.replace(/.*-(\d+)\.ndjson\.gz$/, '$1')),
  ).toEqual(['00000', '00001', '00002']);
  const all = (await Promise.all(names.map((n) => lines(n, true)))).flat();
  expect(new Set(all).size).toBe(3 * LINES);
  expect(all).toHaveLength(3 * LINES);

  // Without fingerprints the same objects are read again: the names are the same ones.
  const again = await runDefinition(job(output));
  expect(again.error).toBeUndefined();
  expect(await objects('copy/')).toEqual(names);
  const metrics = again.metrics[0]!;
  expect(metrics).toMatchObject({ output: 'gcs', events: 3 * LINES, batches: 9, failures: 0 });
});

it('json-array objects named by time tokens, cut by max-events; fingerprints only after upload', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'sluice-gcs-out-'));
  const result = await runDefinition(
    job(
      { 'object-name': 'arrays/%Y/%m/%d/x-{part}.json', format: 'json-array', 'max-events': 1000 },
      { fingerprinting: true },
    ),
    { stateDir },
  );
  expect(result.error).toBeUndefined();
  const names = await objects('arrays/');
  const today = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  expect(names.every((n) => n.startsWith(`arrays/${today}/x-`))).toBe(true);
  const elements = [];
  for (const name of names) {
    const [bytes] = await storage.bucket(TARGET).file(name).download();
    const array = JSON.parse(bytes.toString()) as unknown[];
    expect(array.length).toBeLessThanOrEqual(1000);
    elements.push(...array);
  }
  expect(elements).toHaveLength(3 * LINES);
  // A second run finds every object fingerprinted: nothing more is written.
  const second = await runDefinition(
    job(
      { 'object-name': 'arrays/%Y/%m/%d/x-{part}.json', format: 'json-array', 'max-events': 1000 },
      { fingerprinting: true },
    ),
    { stateDir },
  );
  expect(second.metrics[0]).toMatchObject({ events: 0 });
  expect(await objects('arrays/')).toEqual(names);
});

it('an upload the bucket refuses fails the run and commits no fingerprint', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'sluice-gcs-out-'));
  const definition = job({ 'object-name': 'x/{part}.ndjson' }, { fingerprinting: true });
  (definition.output.gcs as Record<string, unknown>)['bucket-name'] = 'no-such-bucket';
  const result = await runDefinition(definition, { stateDir });
  expect(result.error).toBeDefined();
  const errors = result.reports.filter((r) => r.type === 'job-errors' && r.payload.output === 'gcs');
  expect(errors[0]?.payload).toMatchObject({ output: 'gcs', bucket: 'no-such-bucket' });
  expect(result.metrics[0]).toMatchObject({ output: 'gcs', failures: 1 });
  const fingerprints = join(stateDir, 'to-gcs.fingerprints.json');
  const { existsSync, readFileSync } = await import('node:fs');
  expect(existsSync(fingerprints) ? Object.keys(JSON.parse(readFileSync(fingerprints, 'utf8'))) : []).toEqual(
    [],
  );
});
