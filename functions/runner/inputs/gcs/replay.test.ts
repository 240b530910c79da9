/**
 * A reader that stops early lets go of the object's download: whatever replays the chunks
 * read ahead passes the stop on to the iterator it reads from, so the download's finally
 * runs (its timer cleared, its HTTP stream closed) instead of the process waiting for
 * `retry.timeout`.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { applySteps } from './decompress.ts';
import { replayed } from './replay.ts';

/** An endless object, as a download would give it, that records whether its finally ran. */
function download(chunk: (i: number) => Buffer) {
  const state = { closed: false };
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (let i = 0; ; i++) yield chunk(i);
    } finally {
      state.closed = true;
    }
  }
  return { state, chunks: chunks() };
}

const numbered = (i: number) => Buffer.from(`${i}\n`);

async function readUntil(chunks: AsyncIterable<Buffer>, stop: (seen: number) => boolean): Promise<number> {
  let seen = 0;
  for await (const _ of chunks) if (stop(++seen)) break;
  return seen;
}

describe('replayed', () => {
  it('gives the chunks read ahead, then the rest, in order', async () => {
    const source = download(numbered);
    const head = [(await source.chunks.next()).value as Buffer, (await source.chunks.next()).value as Buffer];
    const seen: string[] = [];
    for await (const chunk of replayed(head, source.chunks)) {
      seen.push(chunk.toString());
      if (seen.length === 4) break;
    }
    expect(seen).toEqual(['0\n', '1\n', '2\n', '3\n']);
  });

  it('closes the source when the reader stops among the chunks read ahead', async () => {
    const source = download(numbered);
    const head = [(await source.chunks.next()).value as Buffer, (await source.chunks.next()).value as Buffer];
    await readUntil(replayed(head, source.chunks), (seen) => seen === 1);
    expect(source.state.closed).toBe(true);
  });

  it('closes the source when the reader stops after the chunks read ahead', async () => {
    const source = download(numbered);
    const head = [(await source.chunks.next()).value as Buffer];
    await readUntil(replayed(head, source.chunks), (seen) => seen === 5);
    expect(source.state.closed).toBe(true);
  });

  it('closes the source when the reader fails', async () => {
    const source = download(numbered);
    const head = [(await source.chunks.next()).value as Buffer];
    const reading = readUntil(replayed(head, source.chunks), (seen) => {
      if (seen === 3) throw new Error('the output went away');
      return false;
    });
    await expect(reading).rejects.toThrow('the output went away');
    expect(source.state.closed).toBe(true);
  });
});

describe('a reader that stops early, through the gzip check', () => {
  const line = Buffer.from(`${JSON.stringify({ msg: 'the quick brown fox' })}\n`.repeat(2000));
  const gzipped = gzipSync(line);
  const cases: Record<string, (i: number) => Buffer> = {
    'plain bytes': () => line,
    // Each chunk a whole gzip member: the stream inflates them all, one after another.
    'gzip, inflated as a stream': () => gzipped,
  };
  for (const [name, chunk] of Object.entries(cases)) {
    it(`closes the download: ${name}`, async () => {
      const source = download(chunk);
      const content = applySteps(source.chunks, { name: 'o.ndjson.gz' }, ['extension'], undefined);
      if (content.kind !== 'bytes') throw new Error('expected bytes');
      await readUntil(content.chunks, (seen) => seen === 3);
      // zlib's stream lets go of its source on its own turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(source.state.closed).toBe(true);
    });
  }

  it('closes the download: gzip too large to inflate whole', async () => {
    const source = download(() => gzipped);
    const whole = { maxStored: gzipped.length * 2, maxInflated: 64 * 1024 * 1024 };
    const content = applySteps(source.chunks, { name: 'o.ndjson.gz' }, ['extension'], undefined, whole);
    if (content.kind !== 'bytes') throw new Error('expected bytes');
    await readUntil(content.chunks, (seen) => seen === 3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(source.state.closed).toBe(true);
  });
});
