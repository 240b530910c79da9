/**
 * `retry.timeout` bounds the wait for Cloud Storage, not for the output: a reader that is
 * slow to take each chunk (a slow sink holding the pipeline back) keeps its one download,
 * instead of having it cut and asked for again by range after every pause.
 */
import { randomBytes } from 'node:crypto';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../../../local/storage-emulator/index.ts';
import { downloadBytes } from './download.ts';

let gcs: StorageEmulator;
let storage: Storage;
beforeAll(async () => {
  gcs = await startStorageEmulator({ port: 0 });
  storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-download' });
  await storage.createBucket('download');
});
afterAll(async () => gcs.stop());

describe('downloadBytes', () => {
  it('keeps one request while the reader pauses longer than retry.timeout between chunks', async () => {
    const bytes = randomBytes(4 << 20);
    const file = storage.bucket('download').file('slow-reader.bin');
    await file.save(bytes, { resumable: false });
    const [metadata] = await file.getMetadata();
    let requests = 0;
    const got: Buffer[] = [];
    const policy = { retries: 5, timeoutMs: 100, baseDelayMs: 1 };
    for await (const chunk of downloadBytes(
      storage.bucket('download'),
      { name: file.name, generation: String(metadata.generation) },
      policy,
      {},
      () => requests++,
    )) {
      got.push(chunk);
      // A slow output: the first three chunks each wait three times the timeout.
      if (got.length <= 3) await new Promise((resolve) => setTimeout(resolve, 3 * policy.timeoutMs));
    }
    expect(Buffer.concat(got).equals(bytes)).toBe(true);
    expect(requests).toBe(1);
  }, 30_000);
});
