/**
 * A job with actions keeps the source of its events: gcs input → actions → gcs output
 * with `{source}` names each part after the object its events were read from, not
 * "unknown", and commits a fingerprint only once that object's parts are uploaded.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { runDefinition } from './helpers.ts';

let gcs: StorageEmulator;
let storage: Storage;
const SOURCE = 'act-src';
const TARGET = 'act-dst';
const LINES = 300;

beforeAll(async () => {
  gcs = await startStorageEmulator();
  process.env.STORAGE_EMULATOR_HOST = gcs.url;
  storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-actions-source' });
  await storage.createBucket(SOURCE);
  await storage.createBucket(TARGET);
  for (const o of [0, 1]) {
    const text = Array.from({ length: LINES }, (_, l) => `{"o":${o},"l":${l}}`).join('\n');
    await storage.bucket(SOURCE).file(`in/${o}.ndjson`).save(`${text}\n`, { resumable: false });
  }
});
afterAll(async () => {
  await gcs.stop();
});

it('names parts after the source object when the job has actions', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'sluice-actions-source-'));
  const result = await runDefinition(
    {
      name: 'act-copy',
      input: {
        gcs: {
          'bucket-name': SOURCE,
          credentials: { 'storage-url': `gs://${SOURCE}` },
          'object-names': ['in/'],
          fingerprinting: true,
        },
      },
      actions: [{ filter: 'event.l < 200.0' }, { set: { copied: 'true' } }],
      output: {
        gcs: {
          'bucket-name': TARGET,
          'object-name': 'copy/{source}-{part}.ndjson',
          'max-events': 150,
        },
      },
    },
    { stateDir },
  );
  expect(result.error).toBeUndefined();
  const [files] = await storage.bucket(TARGET).getFiles({ prefix: 'copy/' });
  // 200 events kept per object, in parts of 150: two parts per source object.
  expect(files.map((f) => f.name).sort()).toEqual([
    'copy/in/0.ndjson-00000.ndjson',
    'copy/in/0.ndjson-00001.ndjson',
    'copy/in/1.ndjson-00000.ndjson',
    'copy/in/1.ndjson-00001.ndjson',
  ]);
  for (const o of [0, 1]) {
    const [part] = await storage.bucket(TARGET).file(`copy/in/${o}.ndjson-00001.ndjson`).download();
    const events = part
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(events).toHaveLength(50);
    expect(events.every((e) => e.o === o && e.copied === true)).toBe(true);
  }
  const fingerprints = Object.keys(
    JSON.parse(readFileSync(join(stateDir, 'act-copy.fingerprints.json'), 'utf8')),
  );
  expect(fingerprints).toHaveLength(2);
});
