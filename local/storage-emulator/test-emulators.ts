/**
 * For the emulator's tests: one emulator per storage mode (in memory, and backed by a
 * folder), each with an official client, so that a behaviour is checked in both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { type StorageEmulator, type StorageEmulatorOptions, startStorageEmulator } from './index.ts';

export interface TestEmulator {
  mode: 'memory' | 'folder';
  emulator: StorageEmulator;
  storage: Storage;
  /** Folder mode: the folder that holds the buckets. */
  dir?: string;
  stop(): Promise<void>;
}

export async function startTestEmulator(
  mode: 'memory' | 'folder',
  options: Omit<StorageEmulatorOptions, 'dir'> = {},
): Promise<TestEmulator> {
  const dir = mode === 'folder' ? mkdtempSync(join(tmpdir(), 'sluice-gcs-test-')) : undefined;
  const emulator = await startStorageEmulator({ ...options, ...(dir ? { dir } : {}) });
  const storage = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-gcs' });
  return {
    mode,
    emulator,
    storage,
    ...(dir ? { dir } : {}),
    async stop() {
      await emulator.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const MODES = ['memory', 'folder'] as const;

/** A fresh bucket with a unique name. */
let buckets = 0;
export async function freshBucket(t: TestEmulator, stem: string) {
  const [bucket] = await t.storage.createBucket(`${stem}-${process.pid}-${++buckets}`);
  return bucket;
}

/** The JSON API path of an object (`/storage/v1/b/<bucket>/o/<name>`). */
export function objectUrl(t: TestEmulator, bucket: string, name: string, query = ''): string {
  return `${t.emulator.url}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}${query ? `?${query}` : ''}`;
}
