/**
 * gcs → gcs is exactly-once per source object: `sluice job run` copying 150 objects is
 * SIGKILLed at 20 seeded points of its progress, then run to the end. After every kill, no
 * object is fingerprinted unless all its parts are in the target bucket; at the end every
 * line is in exactly one target object (no line lost, none duplicated), because part names
 * derive from the source object and its generation, and a re-run overwrites them.
 *
 * Kill points are counted in uploads the emulator received, not in milliseconds: timed
 * kills landed before the first upload whenever the machine was busy (start-up alone
 * takes 0.7-1.2 s), and the test then passed with the input's acknowledge call removed.
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
/**
 * Share of requests the emulator answers 503 during a killed run, as a flaky bucket does:
 * a part is then retried after a backoff, long enough for a kill to land between a commit
 * made too early and the part's arrival. (A request once sent is served even when its
 * sender is killed, so without failures that gap is a fraction of a millisecond.)
 */
const ERROR_RATE = 0.1;
/** Longest wait after the kill point, so the kill lands anywhere around an upload. */
const MAX_KILL_DELAY_MS = 20;
/** Uploads at the end of the copy where no kill point is drawn: the runner may have exited. */
const TAIL = 10 * PARTS;
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

/** Uploads the target bucket has received from the job's runs (all runs together). */
let uploadsBefore = 0;
const uploads = () => gcs.stats().upload - uploadsBefore;

/**
 * Runs the job; SIGKILLs it a seeded moment after the job's runs together have made
 * `killAtUpload` uploads, unless it ended first.
 */
function runJob(killAtUpload?: number) {
  // The run to the end has no failures injected: six in a row would fail it.
  if (killAtUpload !== undefined)
    gcs.setFaults({ errorRate: ERROR_RATE, errorStatus: 503, seed: Math.floor(random() * 2 ** 31) });
  return new Promise<{ killed: boolean; code: number | null }>((resolve) => {
    const child = spawn(process.execPath, ['bin/sluice.js', 'job', 'run', jobFile, '--state-dir', stateDir], {
      env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.url },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    let killed = false;
    let killing: NodeJS.Timeout | undefined;
    // The emulator runs in this process: its upload counter is the child's progress.
    const watch =
      killAtUpload === undefined
        ? undefined
        : setInterval(() => {
            if (uploads() < killAtUpload) return;
            clearInterval(watch);
            killing = setTimeout(() => (killed = child.kill('SIGKILL')), random() * MAX_KILL_DELAY_MS);
          }, 1);
    child.on('close', (code) => {
      gcs.setFaults({});
      clearInterval(watch);
      clearTimeout(killing);
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

it('SIGKILL at 20 seeded points of progress, then a run to the end: every line in exactly one object', async () => {
  uploadsBefore = gcs.stats().upload;
  // Points are drawn over the copy's uploads and taken in order: each run is killed once
  // the uploads so far (re-uploads of parts a killed run left count too, so they come
  // sooner, never later) reach the next point.
  const points = Array.from({ length: KILLS }, () => 1 + Math.floor(random() * (OBJECTS * PARTS - TAIL)));
  points.sort((a, b) => a - b);
  let midRun = 0;
  for (const [k, point] of points.entries()) {
    const before = fingerprinted().length;
    const run = await runJob(point);
    expect(run.killed, `run ${k + 1} ended (code ${run.code}) before upload ${point}; ${replay}`).toBe(true);
    const parts = await targetParts();
    const committed = fingerprinted();
    const early = committed.filter((object) => (parts.get(object)?.length ?? 0) !== PARTS);
    expect(early, `fingerprinted before every part was uploaded (run ${k + 1}); ${replay}`).toEqual([]);
    if (committed.length > before && committed.length < OBJECTS) midRun++;
  }
  // The kills landed while objects were being committed, where a commit before its upload shows.
  expect(midRun, `no kill landed between two commits; ${replay}`).toBeGreaterThan(0);
  const last = await runJob();
  expect(last.code, replay).toBe(0);
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
