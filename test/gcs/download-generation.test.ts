/**
 * A download is pinned to its generation, or not made: a generation a number cannot hold
 * exactly (over 16 digits, or over 2^53 - 1) would be rounded to another version, or become
 * Infinity, which the client sends as an empty `generation=` and Cloud Storage answers with
 * the current version.
 */
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadBytes } from '../../functions/runner/inputs/gcs/download.ts';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';

let gcs: StorageEmulator;
let storage: Storage;
beforeAll(async () => {
  gcs = await startStorageEmulator({ port: 0 });
  storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-download-generation' });
  await storage.createBucket('pinned');
});
afterAll(async () => gcs.stop());

const read = async (generation: string) => {
  const chunks: Buffer[] = [];
  let requests = 0;
  for await (const chunk of downloadBytes(
    storage.bucket('pinned'),
    { name: 'current.json', generation },
    { retries: 0, timeoutMs: 5000 },
    {},
    () => requests++,
  ))
    chunks.push(chunk);
  return { text: Buffer.concat(chunks).toString(), requests };
};

describe('downloadBytes and the generation', () => {
  it('reads nothing for a generation that cannot be pinned; reads a real one', async () => {
    await storage.bucket('pinned').file('current.json').save('{"v":1}\n', { resumable: false });
    const [meta] = await storage.bucket('pinned').file('current.json').getMetadata();
    for (const generation of ['9'.repeat(400), '17957439789300001', '9007199254740992']) {
      const outcome = await read(generation).then(
        (got) => `read ${JSON.stringify(got.text)} in ${got.requests} request(s)`,
        (err: Error) => err.message,
      );
      expect(outcome).toMatch(/is not a Cloud Storage generation: not read$/);
    }
    expect((await read(String(meta.generation))).text).toBe('{"v":1}\n');
  });
});
