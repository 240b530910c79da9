import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from './index.ts';
import { ObjectStore } from './store.ts';

let emulator: StorageEmulator;
let storage: Storage;

beforeAll(async () => {
  emulator = await startStorageEmulator();
  storage = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-gcs' });
});
afterAll(() => emulator.stop());

async function newBucket(name: string) {
  const [bucket] = await storage.createBucket(name);
  return bucket;
}

describe('buckets', () => {
  it('creates, gets, lists and refuses duplicates like GCS', async () => {
    await newBucket('alpha-bucket');
    const [exists] = await storage.bucket('alpha-bucket').exists();
    expect(exists).toBe(true);
    const [buckets] = await storage.getBuckets();
    expect(buckets.map((b) => b.name)).toContain('alpha-bucket');
    await expect(storage.createBucket('alpha-bucket')).rejects.toMatchObject({ code: 409 });
    const [missing] = await storage.bucket('no-such-bucket').exists();
    expect(missing).toBe(false);
  });
});

describe('objects', () => {
  it('uploads simple and multipart, with metadata the client can read', async () => {
    const bucket = await newBucket('upload-bucket');
    await bucket.file('a.txt').save('hello world', { resumable: false, contentType: 'text/plain' });
    const [meta] = await bucket.file('a.txt').getMetadata();
    expect(meta).toMatchObject({
      name: 'a.txt',
      bucket: 'upload-bucket',
      size: '11',
      contentType: 'text/plain',
      md5Hash: 'XrY7u+Ae7tCTyyK7j1rNww==',
      crc32c: 'yZRlqg==',
    });
    expect(Number(meta.generation)).toBeGreaterThan(0);
    expect(meta.etag).toBeTruthy();
    expect(Date.parse(meta.timeCreated!)).toBeGreaterThan(Date.now() - 60_000);
    const [data] = await bucket.file('a.txt').download({ validation: 'crc32c' });
    expect(data.toString()).toBe('hello world');
  });

  it('takes resumable uploads in chunks and streams, and validates checksums on download', async () => {
    const bucket = await newBucket('resumable-bucket');
    const big = randomBytes(6 * 1024 * 1024 + 123);
    await bucket.file('big.bin').save(big, { resumable: true, chunkSize: 2 * 1024 * 1024 });
    const [downloaded] = await bucket.file('big.bin').download({ validation: 'md5' });
    expect(downloaded.equals(big)).toBe(true);

    await pipeline(
      Readable.from([big.subarray(0, 1000), big.subarray(1000)]),
      bucket.file('streamed.bin').createWriteStream(),
    );
    const [again] = await bucket.file('streamed.bin').download({ validation: 'crc32c' });
    expect(again.equals(big)).toBe(true);
  });

  it('serves byte ranges', async () => {
    const bucket = await newBucket('range-bucket');
    await bucket.file('r.txt').save('0123456789', { resumable: false });
    const [part] = await bucket.file('r.txt').download({ start: 2, end: 5 });
    expect(part.toString()).toBe('2345');
    const [tail] = await bucket.file('r.txt').download({ start: 7 });
    expect(tail.toString()).toBe('789');
  });

  it('bumps the generation on overwrite and honours ifGenerationMatch', async () => {
    const bucket = await newBucket('generation-bucket');
    const file = bucket.file('g.txt');
    await file.save('one', { resumable: false });
    const [first] = await file.getMetadata();
    await file.save('two', { resumable: false });
    const [second] = await file.getMetadata();
    expect(Number(second.generation)).toBeGreaterThan(Number(first.generation));
    await expect(
      file.save('three', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } }),
    ).rejects.toMatchObject({
      code: 412,
    });
    expect((await file.download())[0].toString()).toBe('two');
  });

  it('deletes objects; a missing object is a 404 to the client', async () => {
    const bucket = await newBucket('delete-bucket');
    await bucket.file('d.txt').save('x', { resumable: false });
    await bucket.file('d.txt').delete();
    await expect(bucket.file('d.txt').download()).rejects.toMatchObject({ code: 404 });
    await expect(bucket.file('d.txt').getMetadata()).rejects.toMatchObject({ code: 404 });
  });

  it('keeps gzip content-encoding and hands the client the original bytes', async () => {
    const bucket = await newBucket('gzip-bucket');
    const text = 'line\n'.repeat(1000);
    await bucket
      .file('z.txt')
      .save(gzipSync(text), { resumable: false, metadata: { contentEncoding: 'gzip' } });
    const [meta] = await bucket.file('z.txt').getMetadata();
    expect(meta.contentEncoding).toBe('gzip');
    const [data] = await bucket.file('z.txt').download();
    expect(data.toString()).toBe(text);
  });
});

describe('listing', () => {
  it('filters by prefix and delimiter, offsets and glob', async () => {
    const bucket = await newBucket('list-bucket');
    const names = [
      'logs/a/1.json',
      'logs/a/2.txt',
      'logs/b/1.json',
      'logs/top.json',
      'other/x.json',
      'root.txt',
    ];
    for (const name of names) await bucket.file(name).save('{}', { resumable: false });

    const [files, , response] = await bucket.getFiles({
      prefix: 'logs/',
      delimiter: '/',
      autoPaginate: false,
    });
    expect(files.map((f) => f.name)).toEqual(['logs/top.json']);
    expect((response as { prefixes: string[] }).prefixes).toEqual(['logs/a/', 'logs/b/']);

    const [ranged] = await bucket.getFiles({ startOffset: 'logs/a/2', endOffset: 'other/' });
    expect(ranged.map((f) => f.name)).toEqual(['logs/a/2.txt', 'logs/b/1.json', 'logs/top.json']);

    const [globbed] = await bucket.getFiles({ matchGlob: '**/*.json' });
    expect(globbed.map((f) => f.name)).toEqual([
      'logs/a/1.json',
      'logs/b/1.json',
      'logs/top.json',
      'other/x.json',
    ]);
    const [oneLevel] = await bucket.getFiles({ matchGlob: 'logs/*/?.json' });
    expect(oneLevel.map((f) => f.name)).toEqual(['logs/a/1.json', 'logs/b/1.json']);
  });

  it('pages through 2,500 objects, by hand and with autoPaginate', async () => {
    const bucket = await newBucket('page-bucket');
    const names = Array.from({ length: 2500 }, (_, i) => `obj/${String(i).padStart(5, '0')}`);
    for (let i = 0; i < names.length; i += 250) {
      await Promise.all(names.slice(i, i + 250).map((n) => bucket.file(n).save('x', { resumable: false })));
    }
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const [files, next] = await bucket.getFiles({
        maxResults: 1000,
        autoPaginate: false,
        ...(pageToken ? { pageToken } : {}),
      });
      seen.push(...files.map((f) => f.name));
      pageToken = (next as { pageToken?: string } | null)?.pageToken;
      pages++;
    } while (pageToken);
    expect(pages).toBe(3);
    expect(seen).toEqual(names);
    const [all] = await bucket.getFiles();
    expect(all.map((f) => f.name)).toEqual(names);
  }, 60_000);
});

describe('partial responses', () => {
  it('answers `fields` with only the selected fields, and pages still carry their token', async () => {
    const bucket = await newBucket('fields-bucket');
    const names = Array.from({ length: 5 }, (_, i) => `f/${i}.json`);
    for (const name of names) await bucket.file(name).save('{}', { resumable: false });
    const fields = 'items(name,generation,size),nextPageToken';
    const seen: Record<string, unknown>[] = [];
    let pageToken: string | undefined;
    do {
      // With `fields`, the client returns the items as plain resources (not `File`s).
      const [items, next] = (await bucket.getFiles({
        autoPaginate: false,
        maxResults: 2,
        fields,
        ...(pageToken ? { pageToken } : {}),
      })) as unknown as [Record<string, unknown>[], { pageToken?: string } | null];
      seen.push(...items);
      pageToken = next?.pageToken;
    } while (pageToken);
    expect(seen.map((item) => item.name)).toEqual(names);
    for (const item of seen) expect(Object.keys(item).sort()).toEqual(['generation', 'name', 'size']);
    const [full] = await bucket.file('f/0.json').getMetadata();
    expect(seen[0]).toEqual({ name: full.name, generation: full.generation, size: full.size });

    const [metadata] = await bucket.file('f/1.json').getMetadata({ fields: 'name,metadata/color' });
    expect(metadata).toEqual({ name: 'f/1.json' });
    await expect(bucket.getFiles({ fields: 'items(name' })).rejects.toMatchObject({ code: 400 });
  });
});

describe('folder-backed mode', () => {
  it('sees files added, changed and removed by hand after the next rescan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gcs-'));
    mkdirSync(join(dir, 'drop/a'), { recursive: true });
    for (let i = 0; i < 1500; i++) writeFileSync(join(dir, `drop/a/${String(i).padStart(4, '0')}`), `${i}`);
    const folder = await startStorageEmulator({ dir });
    try {
      const bucket = new Storage({ apiEndpoint: folder.url, projectId: 'demo-gcs' }).bucket('drop');
      const list = async () => (await bucket.getFiles())[0].map((f) => f.name);
      expect(await list()).toHaveLength(1500);
      const [before] = await bucket.file('a/0001').getMetadata();
      writeFileSync(join(dir, 'drop/a/0000-new'), 'new');
      rmSync(join(dir, 'drop/a/0002'));
      writeFileSync(join(dir, 'drop/a/0001'), 'changed, longer');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const names = await list();
      expect(names).toHaveLength(1500);
      expect(names.slice(0, 3)).toEqual(['a/0000', 'a/0000-new', 'a/0001']);
      expect(names).not.toContain('a/0002');
      const [after] = await bucket.file('a/0001').getMetadata();
      expect(after.generation).not.toBe(before.generation);
      const [data] = await bucket.file('a/0001').download({ validation: 'crc32c' });
      expect(data.toString()).toBe('changed, longer');
    } finally {
      await folder.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves subfolders as buckets and files placed by hand as objects, and keeps writes on disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gcs-'));
    mkdirSync(join(dir, 'landing/2026/01'), { recursive: true });
    writeFileSync(join(dir, 'landing/2026/01/events.ndjson'), '{"a":1}\n{"a":2}\n');
    const folder = await startStorageEmulator({ dir });
    try {
      const client = new Storage({ apiEndpoint: folder.url, projectId: 'demo-gcs' });
      const [files] = await client.bucket('landing').getFiles();
      expect(files.map((f) => f.name)).toEqual(['2026/01/events.ndjson']);
      const [data] = await client
        .bucket('landing')
        .file('2026/01/events.ndjson')
        .download({ validation: 'crc32c' });
      expect(data.toString()).toBe('{"a":1}\n{"a":2}\n');
      await client.bucket('landing').file('new/written.txt').save('kept', { resumable: false });
    } finally {
      await folder.stop();
    }
    const restarted = await startStorageEmulator({ dir });
    try {
      const client = new Storage({ apiEndpoint: restarted.url, projectId: 'demo-gcs' });
      const [data] = await client.bucket('landing').file('new/written.txt').download();
      expect(data.toString()).toBe('kept');
    } finally {
      await restarted.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('folder-backed writes during rescans', () => {
  it('keeps every object written while the bucket is rescanned, at the generation its upload answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gcs-'));
    mkdirSync(join(dir, 'busy'));
    const folder = await startStorageEmulator({ dir });
    try {
      const bucket = new Storage({ apiEndpoint: folder.url, projectId: 'demo-gcs' }).bucket('busy');
      const written = new Map<string, string>();
      let next = 0;
      // Eight uploads at once for over two rescan periods and at least 120 objects (a loaded
      // machine writes fewer in the time: 81 once in CI), with listings that start rescans.
      const until = Date.now() + 2_500;
      const writing = () => Date.now() < until || written.size < 120;
      const uploader = async () => {
        while (writing()) {
          const name = `n-${next++}.json`;
          const file = bucket.file(name);
          await file.save(`{"n":${next}}\n`, { resumable: false });
          written.set(name, String(file.metadata.generation));
        }
      };
      const lister = async () => {
        while (writing()) await bucket.getFiles({ prefix: 'none/' });
      };
      await Promise.all([...Array.from({ length: 8 }, uploader), lister()]);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const [files] = await bucket.getFiles();
      const listed = new Map(files.map((f) => [f.name, String(f.metadata.generation)]));
      const changed = [...written].filter(([name, generation]) => listed.get(name) !== generation);
      expect(changed).toEqual([]);
    } finally {
      await folder.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('folder-backed metadata saves', () => {
  it('saves of one bucket never overlap: flushes at once (as stop does after a timed save) all succeed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gcs-'));
    try {
      const store = new ObjectStore(dir);
      await store.load();
      await store.createBucket('saved');
      for (let round = 0; round < 20; round++) {
        await store.putObject('saved', `o-${round}`, Buffer.from('x'), { contentType: 'text/plain' });
        await expect(Promise.all([store.flush(), store.flush(), store.flush()])).resolves.toBeDefined();
      }
      const restarted = new ObjectStore(dir);
      await restarted.load();
      expect((await restarted.bucket('saved'))!.names).toHaveLength(20);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('fault injection', () => {
  it('answers a seeded share of requests with 503 and counts requests by kind', async () => {
    const bucket = await newBucket('fault-bucket');
    await bucket.file('f.txt').save('data', { resumable: false });
    emulator.resetStats();
    emulator.setFaults({ errorRate: 0.3, errorStatus: 503, seed: 42 });
    const outcomes: (string | number)[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        outcomes.push(
          await bucket
            .file('f.txt')
            .getMetadata({ retryOptions: { autoRetry: false } } as never)
            .then(
              ([meta]) => String(meta.size),
              (err: { code: number }) => err.code,
            ),
        );
      }
    } finally {
      emulator.setFaults({});
    }
    const stats = emulator.stats();
    expect(outcomes.filter((o) => o === 503).length).toBe(stats.injectedErrors);
    expect(stats.injectedErrors).toBeGreaterThan(0);
    expect(stats.injectedErrors).toBeLessThan(20);
    expect(outcomes.filter((o) => o === '4').length).toBe(20 - stats.injectedErrors);
    expect(stats.metadata).toBeGreaterThanOrEqual(20);
  });

  it('fails downloads with the injected status (stream reads are the caller to retry)', async () => {
    const bucket = await newBucket('fault-download');
    await bucket.file('f.txt').save('data', { resumable: false });
    emulator.setFaults({ errorRate: 1, errorStatus: 429 });
    try {
      await expect(bucket.file('f.txt').download()).rejects.toMatchObject({ code: 429 });
    } finally {
      emulator.setFaults({});
    }
  });

  it('answers bad requests with GCS-style JSON errors', async () => {
    const res = await fetch(`${emulator.url}/storage/v1/b/no-such/o/x`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      error: { code: 404, errors: [{ reason: 'notFound', domain: 'global' }] },
    });
  });
});
