/**
 * Folder mode keeps an ordinary name as the file at that path, and every other valid GCS
 * name (empty segments, a trailing `/`, segments over 255 bytes, a path taken by a file
 * where a folder is needed or the reverse) in the side store, exactly, across rescans and
 * restarts, and never outside the data folder.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, relative } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStorageEmulator } from './index.ts';
import { freshBucket, startTestEmulator, type TestEmulator } from './test-emulators.ts';

const LONG_SEGMENT = `${'x'.repeat(300)}.json`;
const AWKWARD = [
  'L/',
  'L/a',
  'a//b',
  'a/b',
  '/lead',
  'lead',
  'trail//',
  'x.uploading-123',
  'dir/y.uploading-1',
  `deep/${LONG_SEGMENT}`,
  `${'\u00e9'.repeat(200)}/z`,
  'f',
  'f/g',
  'h/i',
  'h',
];

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator('folder');
});
afterAll(() => t.stop());

const rescan = () => new Promise((resolve) => setTimeout(resolve, 1_100));

/** Every file under the data folder, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('folder mode: names a filesystem cannot hold as a path', () => {
  it('stores each valid name as its own object, across a rescan and a restart', async () => {
    const bucket = await freshBucket(t, 'awkward');
    for (const name of AWKWARD) await bucket.file(name).save(`content of ${name}`, { resumable: false });
    const expectAll = async (client: Storage) => {
      const b = client.bucket(bucket.name);
      const [files] = await b.getFiles();
      expect(files.map((f) => f.name)).toEqual([...AWKWARD].sort());
      for (const name of AWKWARD) {
        const [data] = await b.file(name).download({ validation: 'crc32c' });
        expect(data.toString(), name).toBe(`content of ${name}`);
      }
    };
    await expectAll(t.storage);
    await rescan();
    await expectAll(t.storage);

    const again = await startStorageEmulator({ dir: t.dir! });
    try {
      await expectAll(new Storage({ apiEndpoint: again.url, projectId: 'demo-gcs' }));
    } finally {
      await again.stop();
    }
  });

  it('keeps ordinary names as plain files at their path, and deletes leave no files behind', async () => {
    const bucket = await freshBucket(t, 'plain');
    await bucket.file('in/2024/a.json').save('{"a":1}', { resumable: false });
    await bucket.file('in/').save('', { resumable: false });
    expect(readFileSync(join(t.dir!, bucket.name, 'in/2024/a.json'), 'utf8')).toBe('{"a":1}');
    // A file dropped by hand is an object after the next rescan, and a placeholder does not hide it.
    writeFileSync(join(t.dir!, bucket.name, 'in/dropped.txt'), 'by hand');
    await rescan();
    const [files] = await bucket.getFiles();
    expect(files.map((f) => f.name)).toEqual(['in/', 'in/2024/a.json', 'in/dropped.txt']);
    for (const f of files) await f.delete();
    await rescan();
    expect((await bucket.getFiles())[0]).toEqual([]);
    expect(existsSync(join(t.dir!, bucket.name, 'in'))).toBe(false);
    expect(filesUnder(t.dir!).filter((f) => f.includes(bucket.name) && !f.endsWith('.json'))).toEqual([]);
  });

  it('an object written again moves to its plain path once that is free, without a stale copy', async () => {
    const bucket = await freshBucket(t, 'move');
    await bucket.file('p/q').save('1', { resumable: false });
    await bucket.file('p').save('side', { resumable: false });
    await bucket.file('p/q').delete();
    await bucket.file('p').save('plain', { resumable: false });
    expect(readFileSync(join(t.dir!, bucket.name, 'p'), 'utf8')).toBe('plain');
    await rescan();
    const [files] = await bucket.getFiles();
    expect(files.map((f) => f.name)).toEqual(['p']);
    expect((await bucket.file('p').download())[0].toString()).toBe('plain');
  });
});

describe('folder mode: names that would be paths out of the data folder', () => {
  function raw(path: string, body: string) {
    return new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(t.emulator.url);
      const req = request({ hostname, port, path, method: 'POST' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses `..` however it is spelled, and keeps absolute and empty-segment names inside the side store', async () => {
    const bucket = await freshBucket(t, 'escape');
    const before = filesUnder(t.dir!);
    for (const q of [
      '..%2Fout',
      '%2e%2e%2Fout',
      '..%5Cout',
      'a%2F..%2F..%2Fout',
      'nul%00',
      '..%2F',
      '%2F..%2Fout',
    ]) {
      const status = await raw(`/upload/storage/v1/b/${bucket.name}/o?uploadType=media&name=${q}`, 'x');
      expect({ q, status }).toEqual({ q, status: 400 });
    }
    expect(filesUnder(t.dir!)).toEqual(before);

    for (const name of ['/etc/passwd', '//tmp/out', `/${LONG_SEGMENT}/`]) {
      await bucket.file(name).save(name, { resumable: false });
      expect((await bucket.file(name).download())[0].toString()).toBe(name);
    }
    // (Less the bucket's metadata file, saved in the background.)
    const added = filesUnder(t.dir!).filter((f) => !before.includes(f) && !/\.json(\.tmp)?$/.test(f));
    for (const file of added)
      expect(file).toMatch(new RegExp(`^\\.gcs-meta/${bucket.name}\\.objects/[0-9a-f]{64}(\\.name)?$`));
    expect(added).toHaveLength(6);
  });
});
