/**
 * Turns an object's preprocessed content into events according to `payload-mode` and
 * `ignore-linebreaks`:
 * - `binary`: the whole object is one event; its bytes as base64 (JSON holds no bytes).
 * - `ignore-linebreaks: true`: the whole object is one event (`json` parses it, `auto`
 *   parses it when it looks like JSON, `raw` keeps the text).
 * - otherwise one event per line; `json`/`auto` parse each line and a line holding a JSON
 *   array gives one event per element; content that opens a multi-line JSON array is
 *   split element by element (streaming). `auto` keeps what does not parse as `_raw`;
 *   `json` reports it as an error.
 * A UTF-8 byte order mark at the start of the content is not part of it (but of `binary`).
 *
 * Limits, so that no object takes memory or stack out of proportion to them: a line or an
 * element is at most 8 MiB; a whole-object event at most 64 MiB, and 8 MiB (the line
 * limit) when it is parsed; and nothing nested deeper than MAX_SCAN_DEPTH levels is parsed
 * (its tree, and serializing it, would take far more than its bytes, and the stack).
 * What is over a limit, or throws a RangeError as it is parsed or serialized, is reported
 * with where it was (`line`, `element`) and skipped, never a crash: the rest is still read.
 *
 * Events are collected by a batcher (batches.ts), which decides their form; each yielded
 * batch holds the events of one chunk of the object.
 *
 * @example
 *   for await (const batch of contentEvents(content, plan, eventObjects.batcher(plan, meta), onProblem)) deliver(batch);
 */
import type { EventBatcher } from './batches.ts';
import type { PayloadMode } from './config.ts';
import type { Content } from './decompress.ts';
import { nestsDeeperThan, splitJsonArrays } from './json-array.ts';
import { MAX_SCAN_DEPTH } from './json-splicer.ts';
import { replayed } from './replay.ts';
import { decodeUtf8, lineNumber, MAX_LINE_BYTES, splitLines } from './split.ts';

/** Largest object read as a single event (ignore-linebreaks, binary); parsed, the line limit. */
export const MAX_OBJECT_EVENT_BYTES = 64 * 1024 * 1024;

/** Longest element of a multi-line JSON array read as one event (8 Mi characters). */
export const MAX_ELEMENT_CHARS = 8 * 1024 * 1024;

export interface PayloadOptions {
  payloadMode: PayloadMode;
  ignoreLinebreaks: boolean;
  /** Longest line, and largest whole object parsed (`json`, `auto` with ignore-linebreaks). */
  maxLineBytes?: number;
  maxElementChars?: number;
  maxObjectBytes?: number;
}

/** A problem with part of an object: reported as `job-errors`, the rest is still read. */
export type ProblemReporter = (reason: string, detail?: Record<string, unknown>) => void;

export async function* contentEvents<B>(
  content: Content,
  options: PayloadOptions,
  batcher: EventBatcher<B>,
  problem: ProblemReporter,
): AsyncGenerator<B> {
  if (content.kind === 'rows') {
    for await (const slice of content.rows) {
      batcher.rows(slice);
      const batch = batcher.take();
      if (batch) yield batch;
    }
    return;
  }
  const mode = options.payloadMode;
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  if (mode === 'binary' || options.ignoreLinebreaks) {
    const maxObjectBytes = options.maxObjectBytes ?? MAX_OBJECT_EVENT_BYTES;
    // Parsed, a whole object is limited as a line is: its tree takes many times its bytes.
    const maxParsed = Math.min(maxLineBytes, maxObjectBytes);
    const limit = mode === 'json' ? maxParsed : maxObjectBytes;
    let whole = await collect(content.chunks, limit);
    if (!whole) {
      problem('object-too-large', { limit_bytes: limit });
      return;
    }
    if (mode === 'binary') batcher.text(content.base64 ? whole.toString('latin1') : whole.toString('base64'));
    else {
      if (hasBom(whole)) whole = whole.subarray(3);
      const text = whole.toString('utf8');
      // `auto` keeps a larger object as text, unless it is meant as JSON (`{`, `[`).
      const first = mode === 'auto' && whole.length > maxParsed ? text.trimStart().charCodeAt(0) : 0;
      if (first === 123 || first === 91) problem('object-too-large', { limit_bytes: maxParsed });
      else if (mode === 'auto' && whole.length > maxParsed) batcher.text(text);
      else {
        let refused: Refusal | undefined;
        try {
          refused = parseText(text, mode, batcher, false, true);
        } catch (err) {
          refused = refusal(err);
        }
        report(problem, refused, 'object', {});
      }
    }
    const batch = batcher.take();
    if (batch) yield batch;
    return;
  }

  const opened = await opening(content.chunks, maxLineBytes, mode !== 'raw');
  const chunks = opened.chunks;
  if ((mode === 'json' || mode === 'auto') && opensMultiLineArray(opened.firstLine, mode)) {
    const maxChars = options.maxElementChars ?? MAX_ELEMENT_CHARS;
    const onTooLong = (element: number, length: number) =>
      problem('element-too-long', { element, length, limit_chars: maxChars });
    const onTooDeep = (element: number) => report(problem, TOO_DEEP, 'element', { element });
    const elements = splitJsonArrays(decodeUtf8(chunks), {
      maxChars,
      maxDepth: MAX_SCAN_DEPTH,
      onTooLong,
      onTooDeep,
    });
    for await (const { texts, numbers } of elements) {
      for (let i = 0; i < texts.length; i++) {
        // Their nesting was measured as they were split.
        const refused = addText(texts[i]!, mode, batcher, false, false);
        if (refused) report(problem, refused, 'element', { element: numbers[i] });
      }
      const batch = batcher.take();
      if (batch) yield batch;
    }
    return;
  }
  const onTooLong = (line: number, length: number) =>
    problem('line-too-long', { line, length, limit_bytes: maxLineBytes });
  for await (const lines of splitLines(chunks, { maxLineBytes, onTooLong })) {
    const { bytes, spans, utf8 } = lines;
    // A JSON object line goes on as its bytes when the batcher's form allows (and the
    // bytes are text; else decoding turns what is not UTF-8 into U+FFFD first).
    const asBytes = mode !== 'raw' && utf8;
    for (let i = 0; i < spans.length; i += 2) {
      if (asBytes) {
        i = batcher.lines(bytes, spans, i);
        if (i === spans.length) break;
      }
      const line = bytes.toString('utf8', spans[i], spans[i + 1]);
      if (mode === 'raw') batcher.text(line);
      else {
        const refused = addText(line, mode, batcher, true, true);
        if (refused) report(problem, refused, 'line', { line: lineNumber(lines, spans[i]!) });
      }
    }
    const batch = batcher.take();
    if (batch) yield batch;
  }
}

/**
 * Why a text gave no event, for the caller to report with where it was: nested deeper than
 * MAX_SCAN_DEPTH, a RangeError as it was parsed or serialized (its message), or not JSON
 * in `json` mode (its start).
 */
type Refusal = typeof TOO_DEEP | { error: string } | { sample: string };

const TOO_DEEP = Symbol('nested too deep');

function report(
  problem: ProblemReporter,
  refused: Refusal | undefined,
  unit: 'line' | 'element' | 'object',
  where: Record<string, unknown>,
): void {
  if (refused === undefined) return;
  if (refused === TOO_DEEP) problem(`${unit}-too-complex`, { ...where, depth_limit: MAX_SCAN_DEPTH });
  else if ('error' in refused) problem(`${unit}-too-complex`, { ...where, error: refused.error });
  else problem('invalid-json', { ...where, sample: refused.sample });
}

/** The events of one text (a line, an element); why there are none when that is to be reported. */
function addText<B>(
  text: string,
  mode: PayloadMode,
  batcher: EventBatcher<B>,
  /** The text is a whole line: a JSON array on it is expanded into its elements. */
  fromLine: boolean,
  /** Its nesting is still to be measured (an element's was, as it was split). */
  measure: boolean,
): Refusal | undefined {
  try {
    const first = text.charCodeAt(0);
    // `{`: by far the most common line (NDJSON); parse and use the object as the event.
    // `[`: an array; on a line, each of its elements is an event.
    if (first === 123 || first === 91) {
      const value = parsed(text, measure);
      if (value === TOO_DEEP) return TOO_DEEP;
      if (value !== undefined) {
        if (first === 91 && fromLine) for (const element of value as unknown[]) batcher.value(element);
        else batcher.value(value);
        return undefined;
      }
    }
    return parseText(text, mode, batcher, first === 123 || first === 91, measure);
  } catch (err) {
    return refusal(err);
  }
}

/**
 * A RangeError as a text was parsed or serialized (too much for the stack or the heap, in
 * `JSON.stringify` or the job's actions) refuses that text only; anything else fails the object.
 */
function refusal(err: unknown): Refusal {
  if (err instanceof RangeError) return { error: err.message };
  throw err;
}

/** One text as one event; `failedAlready` skips a second JSON.parse of text known not to parse. */
function parseText<B>(
  text: string,
  mode: PayloadMode,
  batcher: EventBatcher<B>,
  failedAlready: boolean,
  measure: boolean,
): Refusal | undefined {
  if (mode === 'raw') {
    batcher.text(text);
    return undefined;
  }
  const trimmed = text.trim();
  if (!failedAlready && (mode === 'json' || looksJson(trimmed))) {
    const value = parsed(trimmed, measure);
    if (value === TOO_DEEP) return TOO_DEEP;
    if (value !== undefined) {
      batcher.value(value);
      return undefined;
    }
  }
  if (mode === 'json') return { sample: trimmed.slice(0, 200) };
  batcher.text(text);
  return undefined;
}

const looksJson = (trimmed: string) => /^[[{"\d-]|^(true|false|null)$/.test(trimmed);

/**
 * The JSON value of `text`, undefined when it is not JSON (no JSON text parses to
 * undefined), TOO_DEEP when it nests deeper than MAX_SCAN_DEPTH (not parsed).
 */
function parsed(text: string, measure: boolean): unknown {
  if (measure && nestsDeeperThan(text, MAX_SCAN_DEPTH)) return TOO_DEEP;
  try {
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof RangeError) throw err;
    return undefined;
  }
}

/** The content opens a JSON array that its first line does not close (a pretty-printed array). */
function opensMultiLineArray(firstLine: string, mode: PayloadMode): boolean {
  const line = firstLine.trim();
  if (!line.startsWith('[') || arrayCloses(line)) return false;
  return mode === 'json' || /^\[\s*([[{]|$)/.test(line);
}

/**
 * Whether the array that `line` opens closes on it (brackets in strings do not count).
 * Measured, not parsed: a first line of 8 MiB would be parsed twice, and one nested too
 * deep is not to be parsed at all.
 */
function arrayCloses(line: string): boolean {
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) {
      for (;;) {
        i = line.indexOf('"', i + 1);
        if (i === -1) return false;
        let backslashes = 0;
        while (line.charCodeAt(i - 1 - backslashes) === 92) backslashes++;
        if ((backslashes & 1) === 0) break;
      }
    } else if (c === 123 || c === 91) depth++;
    else if ((c === 125 || c === 93) && --depth === 0) return true;
  }
  return false;
}

/**
 * The content without a leading UTF-8 byte order mark, and (`peek`) its first line (up
 * to `maxBytes`), decoded; the chunks again from their start.
 */
async function opening(
  chunks: AsyncIterable<Buffer>,
  maxBytes: number,
  peek: boolean,
): Promise<{ firstLine: string; chunks: AsyncIterable<Buffer> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  let head: Buffer[] = [];
  let seen = 0;
  let end = -1;
  while (seen < 3 || (peek && end === -1 && seen <= maxBytes)) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    const nl = end === -1 ? next.value.indexOf(10) : -1;
    if (nl !== -1) end = seen + nl;
    seen += next.value.length;
  }
  // A mark cut across chunks (rare): the first chunks joined.
  if (head.length > 1 && head[0]!.length < 3) head = [Buffer.concat(head)];
  if (head.length && hasBom(head[0]!)) {
    head[0] = head[0]!.subarray(3);
    seen -= 3;
    if (end !== -1) end -= 3;
    if (!head[0].length) head.shift();
  }
  let firstLine = '';
  if (peek && !(seen > maxBytes && end === -1)) {
    const lineEnd = end === -1 ? seen : end;
    firstLine = (head.length === 1 ? head[0]! : Buffer.concat(head)).toString('utf8', 0, lineEnd);
  }
  return { firstLine, chunks: replayed(head, iterator) };
}

function hasBom(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

async function collect(chunks: AsyncIterable<Buffer>, limit: number): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > limit) return undefined;
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
