/**
 * Inflating an object whole (what a read thread does with a small one) gives exactly what
 * zlib's stream gives: the same bytes, and for damaged gzip the same bytes before the same
 * error; objects past the limits take the stream.
 */
import * as zlib from 'node:zlib';
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { seededRandom, testSeed } from '../../../../test/helpers/random.ts';
import { applySteps, inflatesWhole, READ_THREAD_INFLATE, type WholeInflate } from './decompress.ts';

/** Counts the inflates in one call, to see which objects pay for one. */
vi.mock('node:zlib', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:zlib')>();
  return { ...original, gunzipSync: vi.fn(original.gunzipSync) };
});

const meta = { name: 'o.json.gz', contentEncoding: undefined };

async function* chunked(bytes: Buffer, random: () => number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(random() * 70_000);
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

/** What the steps hand on: all their bytes and, when they fail, the message. */
async function inflated(bytes: Buffer, seed: number, whole?: WholeInflate) {
  const content = applySteps(chunked(bytes, seededRandom(seed)), meta, ['extension'], undefined, whole);
  if (content.kind !== 'bytes') throw new Error('expected bytes');
  const parts: Buffer[] = [];
  let failure: string | undefined;
  let largest = 0;
  try {
    for await (const chunk of content.chunks) {
      parts.push(Buffer.from(chunk));
      largest = Math.max(largest, chunk.length);
    }
  } catch (err) {
    failure = (err as Error).message;
  }
  return { bytes: Buffer.concat(parts), failure, largest };
}

function text(random: () => number, lines: number): string {
  return Array.from({ length: lines }, (_, i) =>
    JSON.stringify({ i, s: 'x'.repeat(Math.floor(random() * 80)) }),
  )
    .join('\n')
    .concat('\n');
}

describe('inflating whole', () => {
  it('gives the stream’s bytes and failures for whole, multi-member, damaged and truncated gzip', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const replay = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`;
    const plain = gzipSync(text(random, 20_000));
    const damaged = Buffer.from(plain);
    damaged[Math.floor(damaged.length / 2)]! ^= 0xff;
    const cases: Record<string, Buffer> = {
      plain,
      'two members': Buffer.concat([gzipSync(text(random, 500)), gzipSync(text(random, 700))]),
      'trailing garbage': Buffer.concat([gzipSync(text(random, 300)), Buffer.from('not gzip')]),
      damaged,
      truncated: plain.subarray(0, Math.floor(plain.length * 0.7)),
      empty: gzipSync(Buffer.alloc(0)),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const stream = await inflated(bytes, seed);
      const whole = await inflated(bytes, seed, READ_THREAD_INFLATE);
      expect(whole.bytes.equals(stream.bytes), `${name}: bytes, ${replay}`).toBe(true);
      expect(whole.failure, `${name}: failure, ${replay}`).toBe(stream.failure);
    }
    // The damaged ones did fail, after the bytes before the damage.
    expect((await inflated(damaged, seed, READ_THREAD_INFLATE)).failure).toBeDefined();
    expect((await inflated(cases.truncated!, seed, READ_THREAD_INFLATE)).bytes.length).toBeGreaterThan(0);
  });

  it('hands an object inflated whole on in pieces of 1 MiB, and leaves larger objects and outputs to the stream', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const bytes = gzipSync(text(random, 40_000));
    const whole = await inflated(bytes, seed, { maxStored: bytes.length, maxInflated: 16 << 20 });
    expect(whole.largest).toBe(1024 * 1024);
    // Past either limit, the stream's 256 KiB chunks.
    for (const limits of [
      { maxStored: bytes.length - 1, maxInflated: 16 << 20 },
      { maxStored: bytes.length, maxInflated: 100_000 },
    ]) {
      const streamed = await inflated(bytes, seed, limits);
      expect(streamed.bytes.equals(whole.bytes)).toBe(true);
      expect(streamed.largest).toBeLessThanOrEqual(256 * 1024);
      expect(streamed.failure).toBeUndefined();
    }
  });

  it('leaves to the stream, without inflating it in one call first, an object whose trailer says it inflates past the limit', async () => {
    const seed = testSeed();
    const bytes = gzipSync(text(seededRandom(seed), 4_000));
    const inflatedSize = bytes.readUInt32LE(bytes.length - 4);
    const inOneCall = vi.mocked(zlib.gunzipSync);
    const calls = () => inOneCall.mock.calls.length;
    const before = calls();
    const past = await inflated(bytes, seed, { maxStored: bytes.length, maxInflated: inflatedSize - 1 });
    expect(calls()).toBe(before);
    const within = await inflated(bytes, seed, { maxStored: bytes.length, maxInflated: inflatedSize });
    expect(calls()).toBe(before + 1);
    expect(past.bytes.equals(within.bytes)).toBe(true);
    expect(past.failure).toBeUndefined();
  });

  it('hands on the buffer an object was inflated into, to be freed once read, and only one of its own', async () => {
    const handed: ArrayBuffer[] = [];
    const whole = { ...READ_THREAD_INFLATE, onInflated: (buffer: ArrayBuffer) => handed.push(buffer) };
    const large = gzipSync(text(seededRandom(testSeed()), 5_000));
    const viewed: Buffer[] = [];
    const content = applySteps(chunked(large, seededRandom(1)), meta, ['extension'], undefined, whole);
    if (content.kind !== 'bytes') throw new Error('expected bytes');
    for await (const piece of content.chunks) viewed.push(piece);
    expect(handed).toHaveLength(1);
    expect(viewed.every((piece) => piece.buffer === handed[0])).toBe(true);
    // Small and empty outputs: only a buffer of its own, never one shared with others.
    handed.length = 0;
    const tiny = Buffer.concat([gzipSync('{"a":1}\n'), gzipSync('{"b":2}\n')]);
    expect((await inflated(tiny, 1, whole)).bytes.toString()).toBe('{"a":1}\n{"b":2}\n');
    expect((await inflated(gzipSync(''), 1, whole)).bytes.length).toBe(0);
    expect(handed.every((buffer) => buffer.byteLength > Buffer.poolSize)).toBe(true);
  });

  it('is for gzip objects up to 2 MiB stored', () => {
    const size = READ_THREAD_INFLATE.maxStored;
    expect(inflatesWhole({ name: 'a.json.gz', size }, ['extension'])).toBe(true);
    expect(inflatesWhole({ name: 'a.json.gz', size: size + 1 }, ['extension'])).toBe(false);
    expect(inflatesWhole({ name: 'a.json', size, contentEncoding: 'gzip' }, [])).toBe(true);
    expect(inflatesWhole({ name: 'a.json', size }, ['gzip'])).toBe(true);
    expect(inflatesWhole({ name: 'a.json', size }, ['extension'])).toBe(false);
  });
});
