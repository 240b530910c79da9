/**
 * The local storage emulator keeps objects as files under `<dir>/<bucket>/`. Object and
 * bucket names come from any local process, so none may reach a file outside that folder.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';

let root: string;
let gcsDir: string;
let emulator: StorageEmulator;
let storage: Storage;
let before: string[];

/** Every file and folder under `root`, except those of the bucket and the emulator's metadata. */
function outside(): string[] {
  const own = ['deep/er/gcs/bucket', 'deep/er/gcs/.gcs-meta'];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((p) => !own.some((dir) => p === dir || p.startsWith(`${dir}/`)))
    .sort();
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sluice-edge-gcs-'));
  // Deep enough that `../../..` from a bucket still lands inside `root`.
  gcsDir = join(root, 'deep', 'er', 'gcs');
  mkdirSync(join(gcsDir, 'bucket'), { recursive: true });
  writeFileSync(join(root, 'deep', 'secret.txt'), 'not an object');
  emulator = await startStorageEmulator({ dir: gcsDir });
  storage = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-gcs' });
  await storage.bucket('bucket').file('inside.txt').save('inside', { resumable: false });
});
afterAll(() => emulator.stop());
beforeEach(() => {
  before = outside();
});

const ESCAPES = [
  '../escaped.txt',
  '../../escaped.txt',
  '../../../../escaped.txt',
  'a/../../escaped.txt',
  'a/./b.txt',
  '..',
  '.',
  'a\\..\\..\\escaped.txt',
  'nul\u0000.txt',
];

async function expectRefused(request: Promise<unknown>) {
  const err = (await request.then(
    () => new Error('the request succeeded'),
    (e: unknown) => e,
  )) as { code?: unknown; status?: unknown; response?: { status?: number } };
  expect(err.code ?? err.response?.status ?? err.status).toBe(400);
}

/**
 * node:http sends the path exactly as written; fetch (WHATWG URL) would resolve `..`,
 * `%2E%2E` and `.` segments before sending, which is not what an attacker has to do.
 */
function raw(path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { hostname, port } = new URL(emulator.url);
    const options = { hostname, port, path, method: init.method ?? 'GET', headers: init.headers ?? {} };
    const req = request(options, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Every character that is not unreserved, and dots too, percent-encoded. */
const segment = (name: string) => encodeURIComponent(name).replaceAll('.', '%2E');

describe('the storage emulator refuses object names that leave the bucket folder', () => {
  it('through the official client: simple, multipart and resumable uploads', async () => {
    const bucket = storage.bucket('bucket');
    for (const name of ESCAPES) {
      await expectRefused(bucket.file(name).save('owned', { resumable: false }));
      await expectRefused(bucket.file(name).save('owned', { resumable: false, metadata: { foo: 'x' } }));
      await expectRefused(bucket.file(name).save('owned', { resumable: true }));
    }
    expect(outside()).toEqual(before);
  });

  it('through the official client: copy, move and rewrite destinations, download and delete', async () => {
    const source = storage.bucket('bucket').file('inside.txt');
    // The client puts these names in the URL path, where its URL parser resolves `.` and `..`
    // before sending (as against GCS); the raw HTTP test below sends them unresolved.
    for (const name of ESCAPES.filter((n) => n !== '.' && n !== '..')) {
      await expectRefused(source.copy(storage.bucket('bucket').file(name)));
      await expectRefused(storage.bucket('bucket').file(name).download());
      await expectRefused(storage.bucket('bucket').file(name).delete());
    }
    await expectRefused(storage.bucket('bucket').file('../secret.txt').download());
    expect(outside()).toEqual(before);
    const [kept] = await source.download();
    expect(kept.toString()).toBe('inside');
  });

  it('over raw HTTP, names the client would never send included', async () => {
    for (const name of ESCAPES) {
      const q = segment(name);
      const statuses = [
        (await raw(`/upload/storage/v1/b/bucket/o?uploadType=media&name=${q}`, { method: 'POST', body: 'x' }))
          .status,
        (
          await raw('/upload/storage/v1/b/bucket/o?uploadType=resumable', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name }),
          })
        ).status,
        (await raw(`/storage/v1/b/bucket/o/inside.txt/rewriteTo/b/bucket/o/${q}`, { method: 'POST' })).status,
        (await raw(`/storage/v1/b/bucket/o/inside.txt/copyTo/b/bucket/o/${q}`, { method: 'POST' })).status,
        (await raw(`/storage/v1/b/bucket/o/${q}?alt=media`)).status,
        (await raw(`/download/storage/v1/b/bucket/o/${q}?alt=media`)).status,
        (await raw(`/bucket/${q}`)).status,
        (await raw(`/storage/v1/b/bucket/o/${q}`, { method: 'DELETE' })).status,
        (await raw(`/storage/v1/b/bucket/o/${q}`, { method: 'PATCH', body: '{}' })).status,
      ];
      expect({ name, statuses }).toEqual({ name, statuses: statuses.map(() => 400) });
    }
    const boundary = 'edge-boundary';
    const multipart = (name: string) =>
      `--${boundary}\r\ncontent-type: application/json\r\n\r\n${JSON.stringify({ name })}\r\n` +
      `--${boundary}\r\ncontent-type: text/plain\r\n\r\nowned\r\n--${boundary}--\r\n`;
    for (const name of ESCAPES) {
      const res = await raw('/upload/storage/v1/b/bucket/o?uploadType=multipart', {
        method: 'POST',
        headers: { 'content-type': `multipart/related; boundary=${boundary}` },
        body: multipart(name),
      });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(JSON.parse(res.body).error.code).toBe(400);
    }
    expect(outside()).toEqual(before);
  });

  it('refuses bucket names that are paths on every route', async () => {
    for (const bucket of ['..', '.', '..%2F..', 'bucket%2F..%2F..', '%2E%2E', '%2Egcs-meta']) {
      const statuses = [
        (await raw(`/upload/storage/v1/b/${bucket}/o?uploadType=media&name=x`, { method: 'POST', body: 'x' }))
          .status,
        (await raw(`/storage/v1/b/bucket/o/inside.txt/copyTo/b/${bucket}/o/x`, { method: 'POST' })).status,
        (await raw(`/storage/v1/b/${bucket}/o/secret.txt?alt=media`)).status,
        (await raw(`/storage/v1/b/${bucket}/o`)).status,
        (await raw(`/storage/v1/b/${bucket}`, { method: 'DELETE' })).status,
      ];
      expect({ bucket, statuses }).toEqual({ bucket, statuses: statuses.map(() => 400) });
    }
    expect(outside()).toEqual(before);
  });

  it('still stores ordinary nested names and names with dots inside a segment', async () => {
    const bucket = storage.bucket('bucket');
    for (const name of ['a/b/c.txt', 'a..b/..c', '.hidden', 'x/...']) {
      await bucket.file(name).save(name, { resumable: false });
      expect((await bucket.file(name).download())[0].toString()).toBe(name);
    }
    expect(outside()).toEqual(before);
  });
});
