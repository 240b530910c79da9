/**
 * Request preconditions as GCS documents them (cloud.google.com/storage/docs/request-preconditions):
 * atomic against concurrent writers in both storage modes, applied to the destination of
 * copy, rewrite and compose, 304 for a read whose `...NotMatch` fails, 400 for a non-number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshBucket, MODES, objectUrl, startTestEmulator, type TestEmulator } from './test-emulators.ts';

describe.each(MODES)('preconditions (%s)', (mode) => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(mode);
  });
  afterAll(() => t.stop());

  it('ifGenerationMatch=0 lets exactly one of 10 concurrent writers create the object; the rest get 412', async () => {
    const bucket = await freshBucket(t, 'race');
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        bucket
          .file('race')
          .save(`w${i}`, { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } })
          .then(
            () => 'ok',
            (err: { code?: number }) => err.code,
          ),
      ),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 412)).toHaveLength(9);
  });

  it('copy, rewrite and compose refuse an existing destination under ifGenerationMatch=0 (412) and leave it as it was', async () => {
    const bucket = await freshBucket(t, 'dest');
    await bucket.file('src').save('source', { resumable: false });
    await bucket.file('dst').save('kept', { resumable: false });
    const [before] = await bucket.file('dst').getMetadata();
    const url = (verb: string) =>
      `${objectUrl(t, bucket.name, 'src')}/${verb}/b/${bucket.name}/o/dst?ifGenerationMatch=0`;
    const copy = await fetch(url('copyTo'), { method: 'POST', body: '{}' });
    const rewrite = await fetch(url('rewriteTo'), { method: 'POST', body: '{}' });
    const compose = await fetch(`${objectUrl(t, bucket.name, 'dst')}/compose?ifGenerationMatch=0`, {
      method: 'POST',
      body: JSON.stringify({ sourceObjects: [{ name: 'src' }] }),
    });
    expect([copy.status, rewrite.status, compose.status]).toEqual([412, 412, 412]);
    expect(await compose.json()).toMatchObject({
      error: { code: 412, errors: [{ reason: 'conditionNotMet', domain: 'global' }] },
    });
    await expect(
      bucket.file('src').copy(bucket.file('dst'), { preconditionOpts: { ifGenerationMatch: 0 } }),
    ).rejects.toMatchObject({ code: 412 });
    await expect(bucket.combine(['src'], 'dst', { ifGenerationMatch: 0 } as never)).rejects.toMatchObject({
      code: 412,
    });
    const [after] = await bucket.file('dst').getMetadata();
    expect(after.generation).toBe(before.generation);
    expect((await bucket.file('dst').download())[0].toString()).toBe('kept');
    // And the right generation lets them through.
    const ok = await fetch(
      url('copyTo').replace('ifGenerationMatch=0', `ifGenerationMatch=${before.generation}`),
      {
        method: 'POST',
        body: '{}',
      },
    );
    expect(ok.status).toBe(200);
  });

  it('reads with a failing ifGenerationNotMatch or ifMetagenerationNotMatch answer 304; writes 412; a non-number is 400', async () => {
    const bucket = await freshBucket(t, 'notmatch');
    await bucket.file('o').save('x', { resumable: false });
    const [meta] = await bucket.file('o').getMetadata();
    const get = (query: string) => fetch(objectUrl(t, bucket.name, 'o', query));
    expect((await get(`ifGenerationNotMatch=${meta.generation}`)).status).toBe(304);
    expect((await get(`alt=media&ifGenerationNotMatch=${meta.generation}`)).status).toBe(304);
    expect((await get(`ifMetagenerationNotMatch=${meta.metageneration}`)).status).toBe(304);
    expect((await get(`ifGenerationNotMatch=1`)).status).toBe(200);

    const patch = await fetch(
      objectUrl(t, bucket.name, 'o', `ifMetagenerationNotMatch=${meta.metageneration}`),
      {
        method: 'PATCH',
        body: JSON.stringify({ metadata: { a: 'b' } }),
      },
    );
    expect(patch.status).toBe(412);
    const [unchanged] = await bucket.file('o').getMetadata();
    expect(unchanged.metageneration).toBe(meta.metageneration);

    const bad = await get('ifGenerationMatch=abc');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 400, errors: [{ reason: 'invalid' }] } });
    const badUpload = await fetch(
      `${t.emulator.url}/upload/storage/v1/b/${bucket.name}/o?uploadType=media&name=o&ifGenerationMatch=abc`,
      { method: 'POST', body: 'y' },
    );
    expect(badUpload.status).toBe(400);
    expect((await bucket.file('o').download())[0].toString()).toBe('x');
  });
});
