/**
 * The page pipeline of the `gcs` input: listing page N+2, checking fingerprints of
 * page N+1 and reading page N overlap, in listing order, never further ahead than
 * that (so memory stays bounded), against the folder-backed Storage emulator and the
 * real Firestore emulator.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Firestore } from '@google-cloud/firestore';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { firestoreFingerprints } from '../../functions/runner/fingerprints/firestore.ts';
import { createGcsInput } from '../../functions/runner/inputs/gcs/index.ts';
import type { FingerprintStore, RunEvent } from '../../functions/runner/types.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { gcsJob, memoryWatermarks } from './helpers.ts';

const OBJECTS = 3500;
const PAGES = Math.ceil(OBJECTS / 1000);
let dir: string;
let emulator: StorageEmulator;
let storage: Storage;
let db: Firestore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-pages-'));
  mkdirSync(join(dir, 'pages/p'), { recursive: true });
  for (let i = 0; i < OBJECTS; i++)
    writeFileSync(join(dir, `pages/p/${String(i).padStart(5, '0')}`), `{"i":${i}}\n`);
  emulator = await startStorageEmulator({ dir });
  storage = new Storage({
    apiEndpoint: emulator.url,
    projectId: 'demo-gcs',
    retryOptions: { autoRetry: false },
  });
  db = new Firestore({ projectId: `demo-pages-${randomUUID().slice(0, 8)}` });
});
afterAll(async () => {
  await emulator.stop();
  await db.terminate();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves when `ready()` holds; fails the test if it never does (the stage did not run ahead). */
async function until(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

it('lists one page ahead of the fingerprint check and checks one page ahead of delivery, in order', async () => {
  const store = firestoreFingerprints(db, { tenant: 'pages' });
  const lists = () => emulator.stats().list;
  let checks = 0;
  let deliveries = 0;
  let prepared = 0;
  const checked: FingerprintStore = {
    async seen(job, keys) {
      const k = ++checks;
      // Page k+1 is at most one listing request ahead, and it is requested while page
      // k is still being checked (this call waits for it).
      expect(lists()).toBeLessThanOrEqual(k + 1);
      await until(() => lists() >= Math.min(k + 1, PAGES), `listing page ${k + 1} during check ${k}`);
      const seen = await store.seen(job, keys);
      // Give a listing that runs further ahead than it may the time to show.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lists()).toBeLessThanOrEqual(k + 1);
      return seen;
    },
    commit: (job, keys, maxAgeMs) => store.commit(job, keys, maxAgeMs),
    async prepare(job) {
      prepared++;
      await store.prepare!(job);
    },
  };
  const events: RunEvent[] = [];
  const input = createGcsInput(gcsJob('pages', { mode: 'list-objects', fingerprinting: true }), { storage });
  emulator.resetStats();
  await input.run(
    {
      job: 'job-pages',
      worker: 'test',
      signal: new AbortController().signal,
      fingerprints: checked,
      watermarks: memoryWatermarks(),
      report: () => {},
    },
    async (batch) => {
      const k = ++deliveries;
      expect(checks).toBeLessThanOrEqual(k + 1);
      expect(lists()).toBeLessThanOrEqual(k + 2);
      await until(() => checks >= Math.min(k + 1, PAGES), `checking page ${k + 1} during delivery ${k}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(checks).toBeLessThanOrEqual(k + 1);
      expect(lists()).toBeLessThanOrEqual(k + 2);
      events.push(...batch);
    },
  );
  expect(events.map((e) => e.name)).toEqual(
    Array.from({ length: OBJECTS }, (_, i) => `p/${String(i).padStart(5, '0')}`),
  );
  expect(checks).toBe(PAGES);
  expect(prepared).toBe(1);

  // Everything is fingerprinted now: a second run delivers nothing.
  const again: RunEvent[] = [];
  await input.run(
    {
      job: 'job-pages',
      worker: 'test',
      signal: new AbortController().signal,
      fingerprints: store,
      watermarks: memoryWatermarks(),
      report: () => {},
    },
    async (batch) => {
      again.push(...batch);
    },
  );
  expect(again).toEqual([]);
}, 60_000);
