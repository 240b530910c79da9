/**
 * Crash safety of `sluice job run` on a `gcs` input (issue 8): the runner is killed with
 * SIGKILL at 20 random points of a 100-object run, then run to the end. After every kill
 * no object may be fingerprinted unless every one of its lines was already printed, and
 * at the end every line of every object was printed at least once.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';

const OBJECTS = 100;
const LINES = 400;
const KILLS = 20;
/** Lines at the end of the run where no kill point is drawn (more than a pipe buffer and the kill delay). */
const TAIL = 8_000;
const MAX_KILL_DELAY_MS = 20;
const BUCKET = 'crash-bucket';
const dir = mkdtempSync(join(tmpdir(), 'sluice-crash-'));
const stateDir = join(dir, 'state');
const fingerprintFile = join(stateDir, 'crash.fingerprints.json');
const jobFile = join(dir, 'crash.yaml');
let gcs: StorageEmulator;
const seed = testSeed();
const random = seededRandom(seed);
/** Every failure message names the seed, so the same kill points can be replayed. */
const replay = `seed ${seed}, replay with SLUICE_TEST_SEED=${seed}`;

const objectName = (o: number) => `part-${String(o).padStart(3, '0')}.ndjson`;

beforeAll(async () => {
  gcs = await startStorageEmulator();
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-crash' });
  const [bucket] = await storage.createBucket(BUCKET);
  for (let o = 0; o < OBJECTS; o++) {
    const text = Array.from({ length: LINES }, (_, l) => `{"o":${o},"l":${l}}`).join('\n');
    await bucket.file(objectName(o)).save(text, { resumable: false });
  }
  writeFileSync(
    jobFile,
    `name: crash\ninput:\n  gcs:\n    bucket-name: ${BUCKET}\n    credentials:\n      storage-url: gs://${BUCKET}\n    object-names: []\n    fingerprinting: true\n    object-name-field: object\noutput:\n  print: {}\n`,
  );
});
afterAll(async () => {
  await gcs.stop();
});

/**
 * Runs the job, handing each complete stdout line to `onLine`; SIGKILLs it as soon as
 * `shouldKill()` holds after a chunk.
 */
function runJob(onLine: (line: string) => void, shouldKill?: () => boolean) {
  return new Promise<{ killed: boolean; code: number | null }>((resolve) => {
    const child = spawn(process.execPath, ['bin/sluice.js', 'job', 'run', jobFile, '--state-dir', stateDir], {
      env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.url },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let partial = '';
    let killing = false;
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
      if (!killing && shouldKill?.()) {
        // A random delay decouples the kill from the child's writes, so it also lands
        // between a write and the next fingerprint commit, not just right after a write.
        killing = true;
        setTimeout(() => (killed = child.kill('SIGKILL')), random() * MAX_KILL_DELAY_MS);
      }
    });
    // 'close' waits for the pipe to drain: what the child wrote before dying is still read.
    child.on('close', (code) => resolve({ killed, code }));
  });
}

function fingerprintedObjects(): string[] {
  if (!existsSync(fingerprintFile)) return [];
  const keys = Object.keys(JSON.parse(readFileSync(fingerprintFile, 'utf8')));
  return keys.map((key) => key.replace(`gs://${BUCKET}/`, '').replace(/#\d+$/, ''));
}

it('SIGKILL at 20 random points, then a run to the end: every line printed, nothing fingerprinted early', async () => {
  const printed = new Map<string, Set<number>>();
  let printedLines = 0;
  const record = (line: string) => {
    const event = JSON.parse(line) as { object: string; l: number };
    const seen = printed.get(event.object) ?? new Set<number>();
    printed.set(event.object, seen);
    if (!seen.has(event.l)) printedLines++;
    seen.add(event.l);
  };
  const fullyPrinted = (object: string) => printed.get(object)?.size === LINES;

  // Kill points are drawn over the whole run's unique lines and taken in order: each run
  // is killed once the lines printed so far (all runs together) reach the next point.
  // The last TAIL lines are left out: there the runner may already have exited.
  const total = OBJECTS * LINES;
  const points = Array.from({ length: KILLS }, () => 1 + Math.floor(random() * (total - TAIL)));
  points.sort((a, b) => a - b);
  for (const [kill, point] of points.entries()) {
    const run = await runJob(record, () => printedLines >= point);
    expect(
      run.killed,
      `run ${kill + 1} ended (code ${run.code}) before its kill point ${point}; ${replay}`,
    ).toBe(true);
    const early = fingerprintedObjects().filter((object) => !fullyPrinted(object));
    expect(early, `fingerprinted before all lines were printed (after kill ${kill + 1}); ${replay}`).toEqual(
      [],
    );
  }

  const last = await runJob(record);
  expect(last.code, replay).toBe(0);
  expect(fingerprintedObjects().sort(), replay).toEqual(
    Array.from({ length: OBJECTS }, (_, o) => objectName(o)),
  );
  const incomplete = [...Array(OBJECTS).keys()].map(objectName).filter((object) => !fullyPrinted(object));
  expect(incomplete, replay).toEqual([]);
  // The fingerprints did their job: a run after the end prints nothing.
  const after: string[] = [];
  await runJob((line) => after.push(line));
  expect(after, replay).toEqual([]);
}, 180_000);
