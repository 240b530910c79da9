/**
 * Splits content into lines for line-per-event reading, on the bytes: lines are found
 * with `indexOf` over each whole chunk (no per-line promises, no readline, no decoding),
 * and handed on as spans of the chunk, so a line that is passed through as is never
 * becomes a string. Each chunk's lines are checked as UTF-8 at once (`isUtf8`, native), so
 * that a line passed through is known to be text. Blank lines are dropped, a trailing `\r` is removed, and a line
 * longer than `maxLineBytes` is reported through `onTooLong` and skipped, without ever
 * being held in memory whole.
 *
 * @example
 *   for await (const { bytes, spans } of splitLines(chunks, { maxLineBytes: MAX_LINE_BYTES, onTooLong }))
 *     for (let i = 0; i < spans.length; i += 2) handle(bytes, spans[i], spans[i + 1]);
 */

import { isUtf8 } from 'node:buffer';

/** Longest line read as one event (8 MiB); longer lines are reported and skipped. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/** Whitespace-only lines at least this long are kept (as `_raw`), as in the text path's rule. */
const BLANK_LINE_BYTES = 64;

export interface SplitOptions {
  maxLineBytes: number;
  /**
   * Called with the 1-based line number and its length in bytes, once its end is seen (the
   * end of the content for a last line): the same however the content came in chunks.
   */
  onTooLong(line: number, length: number): void;
}

/** Lines of one chunk: the line `k` is `bytes[spans[2k] .. spans[2k+1])`. */
export interface LineSpans {
  bytes: Buffer;
  spans: number[];
  /** Every line is valid UTF-8 (else some line is not, and each must be decoded to be read). */
  utf8: boolean;
  /**
   * The 1-based number of the line that starts at `bytes[at]`; a span's own number is that
   * plus the line feeds from `at` to its start (`lineNumber`), counted only when needed.
   */
  line: number;
  at: number;
}

/** The 1-based number of the line that starts at `bytes[start]` (a span's start). */
export function lineNumber({ bytes, line, at }: LineSpans, start: number): number {
  let n = line;
  for (let nl = bytes.indexOf(10, at); nl !== -1 && nl < start; nl = bytes.indexOf(10, nl + 1)) n++;
  return n;
}

export async function* splitLines(
  chunks: AsyncIterable<Buffer>,
  options: SplitOptions,
): AsyncGenerator<LineSpans> {
  // The start of a line that runs over into the next chunk(s).
  let carry: Buffer[] = [];
  let carried = 0;
  let skipping = false;
  /** Bytes of the line being skipped, so far. */
  let skipped = 0;
  let lineNo = 0;
  for await (const chunk of chunks) {
    let pos = 0;
    if (carried || skipping) {
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        carryOn(chunk, 0);
        continue;
      }
      lineNo++;
      if (skipping) options.onTooLong(lineNo, skipped + nl);
      else {
        if (carried + nl > options.maxLineBytes) options.onTooLong(lineNo, carried + nl);
        else {
          const line = Buffer.concat([...carry, chunk.subarray(0, nl)]);
          const spans: number[] = [];
          push(spans, line, 0, line.length);
          if (spans.length) yield { bytes: line, spans, utf8: isUtf8(line), line: lineNo, at: 0 };
        }
      }
      carry = [];
      carried = 0;
      skipping = false;
      pos = nl + 1;
    }
    const spans: number[] = [];
    const first = pos;
    const firstLine = lineNo + 1;
    for (;;) {
      const nl = chunk.indexOf(10, pos);
      if (nl === -1) break;
      lineNo++;
      if (nl - pos > options.maxLineBytes) options.onTooLong(lineNo, nl - pos);
      else push(spans, chunk, pos, nl);
      pos = nl + 1;
    }
    if (spans.length)
      yield { bytes: chunk, spans, utf8: isUtf8(chunk.subarray(first, pos)), line: firstLine, at: first };
    if (pos < chunk.length) carryOn(chunk, pos);
  }
  if (skipping) options.onTooLong(lineNo + 1, skipped);
  else if (carried) {
    const line = Buffer.concat(carry);
    const spans: number[] = [];
    push(spans, line, 0, line.length);
    if (spans.length) yield { bytes: line, spans, utf8: isUtf8(line), line: lineNo + 1, at: 0 };
  }

  function carryOn(chunk: Buffer, from: number): void {
    if (skipping) {
      skipped += chunk.length - from;
      return;
    }
    if (carried + chunk.length - from > options.maxLineBytes) {
      skipped = carried + chunk.length - from;
      carry = [];
      carried = 0;
      skipping = true;
      return;
    }
    // A copy, so the rest of the chunk is not kept alive with it.
    carry.push(Buffer.from(chunk.subarray(from)));
    carried += chunk.length - from;
  }
}

function push(spans: number[], bytes: Buffer, start: number, end: number): void {
  if (end > start && bytes[end - 1] === 13) end--;
  if (end === start) return;
  if (end - start < BLANK_LINE_BYTES && isBlank(bytes, start, end)) return;
  spans.push(start, end);
}

function isBlank(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c !== 32 && c !== 9 && c !== 13 && c !== 11 && c !== 12) return false;
  }
  return true;
}

/** Decodes byte chunks as UTF-8 without splitting a character across chunks. */
export async function* decodeUtf8(chunks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const { StringDecoder } = await import('node:string_decoder');
  const decoder = new StringDecoder('utf8');
  for await (const chunk of chunks) {
    const text = decoder.write(chunk);
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}
