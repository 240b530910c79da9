/**
 * Requests GCS refuses: bodies that are not JSON or have fields of the wrong type (400 with
 * GCS's error shape, nothing changed), uploads whose data does not match the md5Hash or
 * crc32c supplied or exceeds the declared size, bodies over the emulator's caps (413); and
 * resumable sessions after they end: a completed one answers with its object, DELETE
 * cancels with 499.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumsOf } from './checksums.ts';
import { freshBucket, MODES, objectUrl, startTestEmulator, type TestEmulator } from './test-emulators.ts';

describe.each(MODES)('refused requests and ended sessions (%s)', (mode) => {
  let t: TestEmulator;
  let upload: string;
  beforeAll(async () => {
    t = await startTestEmulator(mode, { maxObjectBytes: 64 * 1024 });
    upload = `${t.emulator.url}/upload/storage/v1/b`;
  });
  afterAll(() => t.stop());

  const expectGcsError = async (res: Response, code: number, reason: string) => {
    expect(res.status).toBe(code);
    expect(await res.json()).toMatchObject({
      error: {
        code,
        message: expect.any(String),
        errors: [{ reason, domain: 'global', message: expect.any(String) }],
      },
    });
  };

  it('answers bad JSON bodies with 400 parseError or invalid, and changes nothing', async () => {
    const bucket = await freshBucket(t, 'badbody');
    await bucket.file('o').save('x', { resumable: false, metadata: { metadata: { keep: 'me' } } });
    const [before] = await bucket.file('o').getMetadata();
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${upload}/${bucket.name}/o?${path}`, { method: 'POST', body, headers });

    await expectGcsError(await post('uploadType=resumable&name=n', '{bad'), 400, 'parseError');
    const boundary = 'b0undary';
    const multipart =
      `--${boundary}\r\ncontent-type: application/json\r\n\r\n{"name": "n", bad}\r\n` +
      `--${boundary}\r\ncontent-type: text/plain\r\n\r\ndata\r\n--${boundary}--\r\n`;
    await expectGcsError(
      await post('uploadType=multipart', multipart, {
        'content-type': `multipart/related; boundary=${boundary}`,
      }),
      400,
      'parseError',
    );
    const patch = (body: string) => fetch(objectUrl(t, bucket.name, 'o'), { method: 'PATCH', body });
    await expectGcsError(await patch('null'), 400, 'invalid');
    await expectGcsError(await patch('[1]'), 400, 'invalid');
    await expectGcsError(await patch('{"contentType":123,"metadata":"str"}'), 400, 'invalid');
    await expectGcsError(await patch('{"metadata":{"a":{"nested":true}}}'), 400, 'invalid');
    await expectGcsError(
      await fetch(`${t.emulator.url}/storage/v1/b?project=demo-gcs`, { method: 'POST', body: 'null' }),
      400,
      'invalid',
    );
    const [after] = await bucket.file('o').getMetadata();
    expect(after).toEqual(before);
    expect((await bucket.getFiles())[0].map((f) => f.name)).toEqual(['o']);
  });

  it('refuses uploads whose supplied md5Hash or crc32c does not match the data (400), and stores nothing', async () => {
    const bucket = await freshBucket(t, 'hashes');
    const wrongMd5 = createHash('md5').update('other').digest('base64');
    await expect(
      bucket.file('m').save('data', { resumable: false, metadata: { md5Hash: wrongMd5 } }),
    ).rejects.toMatchObject({ code: 400 });
    await expect(
      bucket
        .file('c')
        .save('data', { resumable: true, metadata: { crc32c: checksumsOf(Buffer.from('x')).crc32c } }),
    ).rejects.toMatchObject({ code: 400 });
    expect((await bucket.getFiles())[0]).toEqual([]);
    // The right ones are taken.
    const { md5Hash, crc32c } = checksumsOf(Buffer.from('data'));
    await bucket.file('ok').save('data', { resumable: false, metadata: { md5Hash, crc32c } });
    expect((await bucket.file('ok').download())[0].toString()).toBe('data');
  });

  async function startSession(bucket: string, name: string): Promise<string> {
    const res = await fetch(`${upload}/${bucket}/o?uploadType=resumable`, {
      method: 'POST',
      body: JSON.stringify({ name }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return res.headers.get('location')!;
  }

  it('refuses resumable bytes past the declared total size (400)', async () => {
    const bucket = await freshBucket(t, 'overflow');
    const session = await startSession(bucket.name, 'big');
    const res = await fetch(session, {
      method: 'PUT',
      body: '0123456789',
      headers: { 'content-range': 'bytes 0-9/5' },
    });
    await expectGcsError(res, 400, 'invalid');
    expect((await bucket.file('big').exists())[0]).toBe(false);
  });

  it('answers a status query on a completed session with 200 and the object, and cancels a session with 499', async () => {
    const bucket = await freshBucket(t, 'sessions');
    const session = await startSession(bucket.name, 'done');
    const put = await fetch(session, {
      method: 'PUT',
      body: 'hello',
      headers: { 'content-range': 'bytes 0-4/5' },
    });
    expect(put.status).toBe(200);
    const object = (await put.json()) as { generation: string };
    const status = await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes */5' } });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ name: 'done', size: '5', generation: object.generation });

    const cancelled = await startSession(bucket.name, 'cancelled');
    expect(
      (await fetch(cancelled, { method: 'PUT', body: 'ab', headers: { 'content-range': 'bytes 0-1/*' } }))
        .status,
    ).toBe(308);
    expect((await fetch(cancelled, { method: 'DELETE' })).status).toBe(499);
    const after = await fetch(cancelled, {
      method: 'PUT',
      body: 'cd',
      headers: { 'content-range': 'bytes 2-3/4' },
    });
    expect(after.status).toBe(499);
    expect((await bucket.file('cancelled').exists())[0]).toBe(false);
  });

  it('refuses bodies over the caps with 413 instead of holding them in memory', async () => {
    const bucket = await freshBucket(t, 'caps');
    const big = Buffer.alloc(64 * 1024 + 1, 'x');
    await expectGcsError(
      await fetch(`${upload}/${bucket.name}/o?uploadType=media&name=big`, { method: 'POST', body: big }),
      413,
      'uploadTooLarge',
    );
    const session = await startSession(bucket.name, 'big');
    const first = await fetch(session, {
      method: 'PUT',
      body: big.subarray(0, 40_000),
      headers: { 'content-range': 'bytes 0-39999/*' },
    });
    expect(first.status).toBe(308);
    const second = await fetch(session, {
      method: 'PUT',
      body: big.subarray(40_000),
      headers: { 'content-range': `bytes 40000-${big.length - 1}/${big.length}` },
    });
    await expectGcsError(second, 413, 'uploadTooLarge');
    await bucket.file('x').save('x', { resumable: false });
    const json = await fetch(objectUrl(t, bucket.name, 'x'), {
      method: 'PATCH',
      body: JSON.stringify({ metadata: { a: 'y'.repeat(2 * 1024 * 1024) } }),
    });
    await expectGcsError(json, 413, 'uploadTooLarge');
    expect((await bucket.getFiles())[0].map((f) => f.name)).toEqual(['x']);
  });
});
