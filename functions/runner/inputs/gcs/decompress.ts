/**
 * The byte steps of the `preprocessors` (gzip, base64) and the loop that applies a job's
 * steps in order; preprocess.ts adds the parquet step. Apart from parquet so that the read
 * pool's worker threads (runner/cores/) carry no parquet reader.
 */
import { createGunzip, gunzipSync } from 'node:zlib';
import type { RowSlice } from './arrow-rows.ts';
import type { Preprocessor } from './config.ts';
import type { ObjectMeta } from './list.ts';
import { replayed } from './replay.ts';

export type Content =
  | { kind: 'bytes'; chunks: AsyncIterable<Buffer>; base64: boolean }
  | { kind: 'rows'; rows: AsyncIterable<RowSlice> };

/**
 * Reads parquet from the chunks an earlier step made, or (`untouched`: they are the stored
 * object's own bytes) from the stored object by range.
 */
export type ParquetStep = (chunks: AsyncIterable<Buffer>, untouched: boolean) => AsyncIterable<RowSlice>;

/**
 * Gzip that is small enough is inflated in one call once all of it is in, instead of
 * through zlib's stream (`inflateWhole`): up to `maxStored` compressed bytes that make at
 * most `maxInflated` bytes.
 */
export interface WholeInflate {
  maxStored: number;
  maxInflated: number;
  /**
   * Given each buffer an object is inflated into, for the caller to free once nothing
   * reads it any more (read-task.ts): the pieces handed on are views of it.
   */
  onInflated?: (buffer: ArrayBuffer) => void;
}

/**
 * What a read thread inflates whole. With the stream, zlib's work runs on libuv's threads
 * and comes back to the read thread chunk by chunk; in one call it stays on the read
 * thread, so each read thread inflates its own objects and every core is used (read-pool.ts
 * `threadsFor`). 40 gzip NDJSON objects of 0.55 MB (5 MB inflated) took 1.41-1.505 s
 * instead of 1.71 s as a whole `sluice job run | wc -l` (docs/inputs/gcs.md has the
 * figures, and the memory it costs). The limits bound what a thread holds per object: its
 * compressed bytes and what they inflate to; larger objects take the stream.
 */
export const READ_THREAD_INFLATE: WholeInflate = {
  maxStored: 2 * 1024 * 1024,
  maxInflated: 16 * 1024 * 1024,
};

/** Applies the steps in order; without `parquet`, a parquet step is an error. */
export function applySteps(
  raw: AsyncIterable<Buffer>,
  meta: Pick<ObjectMeta, 'name' | 'contentEncoding'>,
  preprocessors: Preprocessor[],
  parquet: ParquetStep | undefined,
  whole?: WholeInflate,
): Content {
  let content: Content = { kind: 'bytes', chunks: raw, base64: false };
  let untouched = meta.contentEncoding !== 'gzip';
  if (!untouched) content = { kind: 'bytes', chunks: gunzipIfGzip(raw, whole), base64: false };
  for (const step of expandSteps(preprocessors, meta.name)) {
    if (content.kind === 'rows') continue; // rows are already JSON: nothing below applies to them
    if (step === 'gzip') content = { ...content, chunks: gunzipIfGzip(content.chunks, whole) };
    else if (step === 'base64') content = { ...content, chunks: base64Encode(content.chunks), base64: true };
    else if (step === 'parquet') {
      if (!parquet) throw new Error('this reader does not read parquet');
      content = { kind: 'rows', rows: parquet(content.chunks, untouched) };
    }
    untouched = false;
  }
  return content;
}

/** `extension` becomes the steps its name asks for; other steps stay as listed. */
export function expandSteps(
  preprocessors: Preprocessor[],
  name: string,
): Exclude<Preprocessor, 'extension'>[] {
  const steps: Exclude<Preprocessor, 'extension'>[] = [];
  for (const step of preprocessors) {
    if (step !== 'extension') {
      steps.push(step);
      continue;
    }
    let rest = name.toLowerCase();
    if (rest.endsWith('.gz')) {
      steps.push('gzip');
      rest = rest.slice(0, -3);
    }
    if (rest.endsWith('.parquet')) steps.push('parquet');
  }
  return steps;
}

/** Whether a read thread inflates the object in one call (when its bytes turn out to be gzip). */
export function inflatesWhole(
  meta: Pick<ObjectMeta, 'name' | 'contentEncoding' | 'size'>,
  preprocessors: Preprocessor[],
): boolean {
  if (meta.size > READ_THREAD_INFLATE.maxStored) return false;
  return meta.contentEncoding === 'gzip' || expandSteps(preprocessors, meta.name).includes('gzip');
}

async function* gunzipIfGzip(chunks: AsyncIterable<Buffer>, whole?: WholeInflate): AsyncGenerator<Buffer> {
  const iterator = chunks[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headLength = 0;
  while (headLength < 2) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    headLength += next.value.length;
  }
  const rest = replayed(head, iterator);
  const first = Buffer.concat(head);
  if (first.length < 2 || first[0] !== 0x1f || first[1] !== 0x8b) {
    yield* rest;
    return;
  }
  yield* whole ? inflateWhole(rest, whole) : inflate(rest);
}

/**
 * `inflate`, in one call once every byte is in, when there are at most `maxStored` of them
 * and they make at most `maxInflated`. Otherwise, and for damaged data, the stream does
 * it from the bytes already read: what it gives before failing and how it fails stay
 * exactly as they are without this.
 */
async function* inflateWhole(chunks: AsyncIterable<Buffer>, limits: WholeInflate): AsyncGenerator<Buffer> {
  const iterator = chunks[Symbol.asyncIterator]();
  const parts: Buffer[] = [];
  let stored = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    parts.push(next.value);
    stored += next.value.length;
    if (stored > limits.maxStored) {
      yield* inflate(replayed(parts, iterator));
      return;
    }
  }
  const bytes = Buffer.concat(parts, stored);
  // Gzip's trailer gives the (last member's) inflated size, exact below 4 GiB, which 2 MiB
  // of deflate cannot pass. Past the limit, the stream at once: inflating in one call
  // would fail at the limit, and the stream would do that work again.
  const trailerSize = bytes.length >= 18 ? bytes.readUInt32LE(bytes.length - 4) : 0;
  if (trailerSize > limits.maxInflated) {
    // In the pieces they came in: how far a stream gets into truncated gzip before it fails
    // depends on where its writes end, and must be what it is without this.
    yield* inflate(replayed(parts, iterator));
    return;
  }
  let inflated: Buffer;
  try {
    // zlib's output grows in chunks of this size.
    const chunkSize = Math.min(Math.max(trailerSize + 1, 64 * 1024), limits.maxInflated);
    inflated = gunzipSync(bytes, { maxOutputLength: limits.maxInflated, chunkSize });
  } catch {
    yield* inflate(replayed(parts, iterator));
    return;
  }
  // A small output may share Buffer's pool with other buffers: never handed on to be freed.
  if (inflated.buffer.byteLength > Buffer.poolSize) limits.onInflated?.(inflated.buffer as ArrayBuffer);
  for (let at = 0; at < inflated.length; at += WHOLE_PIECE) yield inflated.subarray(at, at + WHOLE_PIECE);
}

/** What an object inflated whole is handed on in: the lines of each piece make a batch. */
const WHOLE_PIECE = 1024 * 1024;

/**
 * Decompresses with zlib's stream written to and read from directly (no `Readable.from`,
 * `pipeline` or async iterator over it: their per-chunk cost was about a third of the
 * main thread's decompression work, `npm run bench:gcs`). Output chunks wait in a queue;
 * past OUTPUT_AHEAD of them the stream is paused, so a slow reader slows decompression
 * and, through `write`'s backpressure, the download.
 */
async function* inflate(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  // 256 KiB: a quarter of the per-chunk callbacks of 64 KiB, about 10% faster on gzip
  // NDJSON (a 1M-line run went from 0.60 s to 0.53 s); with OUTPUT_AHEAD, 2 MiB held per object.
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  const source = chunks[Symbol.asyncIterator]();
  const output: Buffer[] = [];
  let ended = false;
  let stopped = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const signal = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  gunzip.on('data', (chunk: Buffer) => {
    output.push(chunk);
    if (output.length >= OUTPUT_AHEAD) gunzip.pause();
    signal();
  });
  gunzip.on('end', () => {
    ended = true;
    signal();
  });
  gunzip.on('error', (err) => {
    failure ??= err;
    signal();
  });
  void (async () => {
    for (;;) {
      const next = await source.next();
      if (next.done || stopped) break;
      if (!gunzip.write(next.value)) await drained(gunzip);
      if (stopped) return;
    }
    if (!stopped) gunzip.end();
  })().catch((err: unknown) => {
    failure ??= err;
    signal();
  });
  try {
    for (;;) {
      const chunk = output.shift();
      if (chunk) {
        if (gunzip.isPaused() && output.length <= OUTPUT_AHEAD / 2) gunzip.resume();
        yield chunk;
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    if (!ended) {
      // Stopped early (a failure, or the reader went away): free zlib and the download.
      stopped = true;
      gunzip.destroy();
      source.return?.(undefined).catch(() => {});
    }
  }
}

/** Resolves when `stream` can take writes again, or is closed. */
function drained(stream: NodeJS.WritableStream & NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** Decompressed chunks held before zlib is paused. */
const OUTPUT_AHEAD = 8;

async function* base64Encode(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let carry = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const data = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const whole = data.length - (data.length % 3);
    carry = Buffer.from(data.subarray(whole));
    if (whole) yield Buffer.from(data.subarray(0, whole).toString('base64'), 'latin1');
  }
  if (carry.length) yield Buffer.from(carry.toString('base64'), 'latin1');
}
