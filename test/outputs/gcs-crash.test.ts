/**
 * gcs → gcs is exactly-once per source object: `sluice job run` copying 150 objects is
 * SIGKILLed at 20 seeded random moments, then run to the end. After every kill, no object
 * is fingerprinted unless all its parts are in the target bucket; at the end every line
 * is in exactly one target object (no line lost, none duplicated), because part names
 * derive from the source object and its generation, and a re-run overwrites them.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';

const OBJECTS = 150;
const LINES = 400;
const PART_EVENTS = 150;
const PARTS = Math.ceil(LINES / PART_EVENTS);
const KILLS = 20;
const SOURCE = 'crash-src';
const TARGET = 'crash-dst';
const dir = mkdtempSync(join(tmpdir(), 'sluice-gcs-crash-'));
const stateDir = join(dir, 'state');
const fingerprintFile = join(stateDir, 'copy.fingerprints.json');
const jobFile = join(dir, 'copy.yaml');
let gcs: StorageEmulator;
let storage: Storage;
const seed = testSeed();
const random = seededRandom(seed);
const replay = `seed ${seed}, replay with SLUICE_TEST_SEED=${seed}`;
const objectName = (o: number) => `in/${String(o).padStart(3, '0')}.ndjson`;

beforeAll(async () => {
  // The CLI bundle is rebuilt on first use after a source change: not inside a kill window.
  execFileSync(process.execPath, ['bin/sluice.js', '--version'], { stdio: 'ignore' });
  gcs = await startStorageEmulator();
  storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-crash' });
  await storage.createBucket(SOURCE);
  await storage.createBucket(TARGET);
  for (let o = 0; o < OBJECTS; o++) {
    const text = Array.from({ length: LINES }, (_, l) => `{"o":${o},"l":${l}}`).join('\n');
    await storage.bucket(SOURCE).file(objectName(o)).save(text, { resumable: false });
  }
  writeFileSync(
    jobFile,
    `name: copy\ninput:\n  gcs:\n    bucket-name: ${SOURCE}\n    credentials:\n      storage-url: gs://${SOURCE}\n    object-names: [in/]\n    fingerprinting: true\noutput:\n  gcs:\n    bucket-name: ${TARGET}\n    object-name: "out/{source}-{generation}-{part}.ndjson.gz"\n    compression: gzip\n    max-events: ${PART_EVENTS}\n`,
  );
}, 120_000);
afterAll(async () => {
  await gcs.stop();
});

/** Runs the job; SIGKILLs it after `killAfterMs` unless it ended first. */
function runJob(killAfterMs?: number) {
  return new Promise<{ killed: boolean; code: number | null }>((resolve) => {
    const child = spawn(process.execPath, ['bin/sluice.js', 'job', 'run', jobFile, '--state-dir', stateDir], {
      env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.url },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    let killed = false;
    const timer =
      killAfterMs === undefined ? undefined : setTimeout(() => (killed = child.kill('SIGKILL')), killAfterMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ killed, code });
    });
  });
}

async function targetParts(): Promise<Map<string, string[]>> {
  const [files] = await storage.bucket(TARGET).getFiles({ prefix: 'out/' });
  const bySource = new Map<string, string[]>();
  for (const file of files) {
    const match = /^out\/(in\/\d+\.ndjson)-\d+-(\d{5})\.ndjson\.gz$/.exec(file.name);
    expect(match, `unexpected object ${file.name}; ${replay}`).not.toBeNull();
    bySource.set(match![1]!, [...(bySource.get(match![1]!) ?? []), file.name]);
  }
  return bySource;
}

function fingerprinted(): string[] {
  if (!existsSync(fingerprintFile)) return [];
  return Object.keys(JSON.parse(readFileSync(fingerprintFile, 'utf8'))).map((k) =>
    k.replace(`gs://${SOURCE}/`, '').replace(/#\d+$/, ''),
  );
}

it('SIGKILL at 20 seeded moments, then a run to the end: every line in exactly one object', async () => {
  let kills = 0;
  for (let k = 0; k < KILLS; k++) {
    // Startup takes about half a second; kills land from before the first upload to mid-run.
    const run = await runJob(250 + Math.floor(random() * 900));
    if (run.killed) kills++;
    const parts = await targetParts();
    const early = fingerprinted().filter((object) => (parts.get(object)?.length ?? 0) !== PARTS);
    expect(early, `fingerprinted before every part was uploaded (run ${k + 1}); ${replay}`).toEqual([]);
  }
  const last = await runJob();
  expect(last.code, replay).toBe(0);
  expect(kills, `no run was killed mid-way; ${replay}`).toBeGreaterThan(0);
  const parts = await targetParts();
  expect(parts.size, replay).toBe(OBJECTS);
  const seen = new Map<string, number>();
  for (const names of parts.values()) {
    expect(names.length, replay).toBe(PARTS);
    for (const name of names) {
      const [bytes] = await storage.bucket(TARGET).file(name).download();
      for (const line of gunzipSync(bytes).toString().split('\n').filter(Boolean))
        seen.set(line, (seen.get(line) ?? 0) + 1);
    }
  }
  expect(seen.size, `lines lost; ${replay}`).toBe(OBJECTS * LINES);
  expect(
    [...seen.values()].filter((n) => n !== 1),
    `lines duplicated; ${replay}`,
  ).toEqual([]);
  expect(fingerprinted().length, replay).toBe(OBJECTS);
}, 180_000);
