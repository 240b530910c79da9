/**
 * Object metadata as GCS keeps it: PATCH with null deletes a field or key, PUT replaces
 * the writable fields, every writable field (contentLanguage, customTime too) survives
 * uploads, patches and copies, composite objects have a componentCount and no md5Hash,
 * and downloads carry the headers the metadata implies.
 */
import { get, type IncomingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshBucket, MODES, objectUrl, startTestEmulator, type TestEmulator } from './test-emulators.ts';

describe.each(MODES)('object metadata (%s)', (mode) => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(mode);
  });
  afterAll(() => t.stop());

  it('PATCH with null deletes a metadata key, all custom metadata, or a field', async () => {
    const bucket = await freshBucket(t, 'clear');
    const file = bucket.file('m.txt');
    await file.save('x', {
      resumable: false,
      metadata: { cacheControl: 'no-cache', metadata: { a: '1', b: '2' } },
    });
    await file.setMetadata({ metadata: { a: null } });
    expect((await file.getMetadata())[0].metadata).toEqual({ b: '2' });
    // The client's types do not allow null, the JSON API does.
    await file.setMetadata({ metadata: null, cacheControl: null } as never);
    const [cleared] = await file.getMetadata();
    expect(cleared.metadata).toBeUndefined();
    expect(cleared.cacheControl).toBeUndefined();
  });

  it('PUT (objects.update) replaces the writable metadata instead of merging', async () => {
    const bucket = await freshBucket(t, 'replace');
    await bucket.file('u.txt').save('x', {
      resumable: false,
      metadata: { contentType: 'text/plain', cacheControl: 'no-cache', metadata: { a: '1' } },
    });
    const res = await fetch(objectUrl(t, bucket.name, 'u.txt'), {
      method: 'PUT',
      body: JSON.stringify({ contentType: 'text/csv', metadata: { b: '2' } }),
    });
    expect(res.status).toBe(200);
    const [meta] = await bucket.file('u.txt').getMetadata();
    expect(meta.contentType).toBe('text/csv');
    expect(meta.metadata).toEqual({ b: '2' });
    expect(meta.cacheControl).toBeUndefined();
  });

  it('keeps contentLanguage and customTime through upload, patch and copy; a copy keeps cacheControl and contentDisposition', async () => {
    const bucket = await freshBucket(t, 'fields');
    const file = bucket.file('f.txt');
    const customTime = '2024-01-02T03:04:05.000Z';
    await file.save('x', {
      resumable: false,
      metadata: {
        contentLanguage: 'fr',
        customTime,
        cacheControl: 'public, max-age=60',
        contentDisposition: 'attachment; filename="f.txt"',
      },
    });
    expect((await file.getMetadata())[0]).toMatchObject({ contentLanguage: 'fr', customTime });
    await file.setMetadata({ contentLanguage: 'de' });
    await file.copy(bucket.file('copy.txt'));
    const [copied] = await bucket.file('copy.txt').getMetadata();
    expect(copied).toMatchObject({
      contentLanguage: 'de',
      customTime,
      cacheControl: 'public, max-age=60',
      contentDisposition: 'attachment; filename="f.txt"',
    });
    const res = await fetch(objectUrl(t, bucket.name, 'copy.txt', 'alt=media'));
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="f.txt"');
    expect(res.headers.get('content-language')).toBe('de');
  });

  it('gives a composite object a componentCount and a crc32c but no md5Hash', async () => {
    const bucket = await freshBucket(t, 'compose');
    await bucket.file('p1').save('hello ', { resumable: false });
    await bucket.file('p2').save('world', { resumable: false });
    await bucket.combine(['p1', 'p2'], 'both');
    await bucket.combine(['both', 'p1'], 'more');
    const [both] = await bucket.file('both').getMetadata();
    expect(both.componentCount).toBe(2);
    expect(both.md5Hash).toBeUndefined();
    expect(both.crc32c).toBeTruthy();
    expect((await bucket.file('more').getMetadata())[0].componentCount).toBe(3);
    const [data] = await bucket.file('both').download({ validation: 'crc32c' });
    expect(data.toString()).toBe('hello world');
  });

  it('serves a gzip object with Cache-Control: no-transform as stored, whatever the request accepts', async () => {
    const bucket = await freshBucket(t, 'notransform');
    const zipped = gzipSync('text '.repeat(100));
    await bucket.file('z.txt').save(zipped, {
      resumable: false,
      metadata: { contentEncoding: 'gzip', cacheControl: 'no-transform' },
    });
    // node:http, not fetch: fetch would decompress, and the bytes on the wire are what matter here.
    const res = await new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const url = objectUrl(t, bucket.name, 'z.txt', 'alt=media');
      get(url, { headers: { 'accept-encoding': 'identity' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.body.equals(zipped)).toBe(true);
  });
});
