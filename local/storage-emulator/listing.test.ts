/**
 * Listing with a delimiter across pages: every object and every rolled-up prefix comes
 * exactly once, whatever the page size, also when an object's name ends in the delimiter
 * (a folder placeholder such as `L/`, which GCS lists as an object, not a prefix).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshBucket, MODES, startTestEmulator, type TestEmulator } from './test-emulators.ts';

describe.each(MODES)('listing pages with a delimiter (%s)', (mode) => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(mode);
  });
  afterAll(() => t.stop());

  async function pages(bucket: string, query: Record<string, string>, maxResults: number) {
    const items: string[] = [];
    const prefixes: string[] = [];
    let pageToken: string | undefined;
    let count = 0;
    do {
      const params = new URLSearchParams({ ...query, maxResults: String(maxResults) });
      if (pageToken) params.set('pageToken', pageToken);
      const res = await fetch(`${t.emulator.url}/storage/v1/b/${bucket}/o?${params}`);
      const body = (await res.json()) as {
        items?: { name: string }[];
        prefixes?: string[];
        nextPageToken?: string;
      };
      items.push(...(body.items ?? []).map((i) => i.name));
      prefixes.push(...(body.prefixes ?? []));
      pageToken = body.nextPageToken;
      if (++count > 100) throw new Error('pages do not end');
    } while (pageToken);
    return { items, prefixes };
  }

  it('lists the objects after a folder placeholder on the next pages', async () => {
    const bucket = await freshBucket(t, 'placeholder');
    for (const name of ['L/', 'L/a', 'L/b', 'L/c/d', 'L/e'])
      await bucket.file(name).save('x', { resumable: false });
    const whole = await pages(bucket.name, { prefix: 'L/', delimiter: '/' }, 1000);
    expect(whole).toEqual({ items: ['L/', 'L/a', 'L/b', 'L/e'], prefixes: ['L/c/'] });
    for (const size of [1, 2, 3]) {
      expect(await pages(bucket.name, { prefix: 'L/', delimiter: '/' }, size), `maxResults ${size}`).toEqual(
        whole,
      );
    }
    // Through the official client too, page by page.
    const seen: string[] = [];
    let query: Record<string, unknown> | null = {
      prefix: 'L/',
      delimiter: '/',
      maxResults: 1,
      autoPaginate: false,
    };
    while (query) {
      const [files, next]: [{ name: string }[], Record<string, unknown> | null, unknown] =
        (await bucket.getFiles(query)) as never;
      seen.push(...files.map((f) => f.name));
      query = next;
    }
    expect(seen).toEqual(['L/', 'L/a', 'L/b', 'L/e']);
  });

  it('pages a tree of placeholders, nested folders and names past the delimiter in code order, each entry once', async () => {
    const bucket = await freshBucket(t, 'tree');
    const names = [
      'a/',
      'a/1',
      'a/b/',
      'a/b/2',
      'a/c',
      'a-',
      'a0',
      'b/',
      'b//x',
      'c',
      'c/d/e/',
      'd\u00e9/',
      'd\u00e9/f',
    ];
    for (const name of names) await bucket.file(name).save('x', { resumable: false });
    const queries: Record<string, string>[] = [
      { delimiter: '/' },
      { prefix: 'a/', delimiter: '/' },
      { delimiter: '/', prefix: 'c/' },
      {},
    ];
    for (const query of queries) {
      const whole = await pages(bucket.name, query, 1000);
      for (const size of [1, 2, 5]) {
        const paged = await pages(bucket.name, query, size);
        expect(paged, `${JSON.stringify(query)} maxResults ${size}`).toEqual(whole);
      }
    }
    expect(await pages(bucket.name, { delimiter: '/' }, 1000)).toEqual({
      items: ['a-', 'a0', 'c'],
      prefixes: ['a/', 'b/', 'c/', 'd\u00e9/'],
    });
  });

  it('leaves `items` out of an empty page, as GCS does', async () => {
    const bucket = await freshBucket(t, 'empty');
    const res = await fetch(`${t.emulator.url}/storage/v1/b/${bucket.name}/o`);
    expect(await res.json()).toEqual({ kind: 'storage#objects' });
  });
});
