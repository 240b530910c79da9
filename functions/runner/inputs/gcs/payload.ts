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
 * Whole-object events are limited to MAX_OBJECT_EVENT_BYTES; longer lines and objects are
 * reported and skipped, never a crash.
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
import { splitJsonArrays } from './json-array.ts';
import { replayed } from './replay.ts';
import { decodeUtf8, MAX_LINE_BYTES, splitLines } from './split.ts';

/** Largest object read as a single event (ignore-linebreaks, binary). */
export const MAX_OBJECT_EVENT_BYTES = 64 * 1024 * 1024;

/** Longest element of a multi-line JSON array read as one event (8 Mi characters). */
export const MAX_ELEMENT_CHARS = 8 * 1024 * 1024;

export interface PayloadOptions {
  payloadMode: PayloadMode;
  ignoreLinebreaks: boolean;
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
  if (mode === 'binary' || options.ignoreLinebreaks) {
    const whole = await collect(content.chunks, options.maxObjectBytes ?? MAX_OBJECT_EVENT_BYTES);
    if (!whole) {
      problem('object-too-large', { limit_bytes: options.maxObjectBytes ?? MAX_OBJECT_EVENT_BYTES });
      return;
    }
    if (mode === 'binary') batcher.text(content.base64 ? whole.toString('latin1') : whole.toString('base64'));
    else parseText(whole.toString('utf8'), mode, batcher, problem, false);
    const batch = batcher.take();
    if (batch) yield batch;
    return;
  }

  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  let chunks = content.chunks;
  if (mode === 'json' || mode === 'auto') {
    const peeked = await peekFirstLine(chunks, maxLineBytes);
    chunks = peeked.chunks;
    if (opensMultiLineArray(peeked.firstLine, mode)) {
      const maxChars = options.maxElementChars ?? MAX_ELEMENT_CHARS;
      const onTooLong = (element: number, length: number) =>
        problem('element-too-long', { element, length, limit_chars: maxChars });
      for await (const texts of splitJsonArrays(decodeUtf8(chunks), { maxChars, onTooLong })) {
        addTexts(texts, mode, batcher, problem, false);
        const batch = batcher.take();
        if (batch) yield batch;
      }
      return;
    }
  }
  const onTooLong = (line: number, length: number) =>
    problem('line-too-long', { line, length, limit_bytes: maxLineBytes });
  for await (const { bytes, spans, utf8 } of splitLines(chunks, { maxLineBytes, onTooLong })) {
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
      else addText(line, mode, batcher, problem, true);
    }
    const batch = batcher.take();
    if (batch) yield batch;
  }
}

function addTexts<B>(
  texts: string[],
  mode: PayloadMode,
  batcher: EventBatcher<B>,
  problem: ProblemReporter,
  fromLines: boolean,
): void {
  for (let i = 0; i < texts.length; i++) addText(texts[i]!, mode, batcher, problem, fromLines);
}

function addText<B>(
  text: string,
  mode: PayloadMode,
  batcher: EventBatcher<B>,
  problem: ProblemReporter,
  /** The text is a whole line: a JSON array on it is expanded into its elements. */
  fromLine: boolean,
): void {
  const first = text.charCodeAt(0);
  // `{`: by far the most common line (NDJSON); parse and use the object as the event.
  if (first === 123) {
    const value = parsed(text);
    if (value !== undefined) {
      batcher.value(value);
      return;
    }
  } else if (first === 91 && fromLine) {
    const value = parsed(text);
    if (Array.isArray(value)) {
      for (const element of value) batcher.value(element);
      return;
    }
  }
  parseText(text, mode, batcher, problem, first === 123 || first === 91);
}

/** One text as one event; `failedAlready` skips a second JSON.parse of text known not to parse. */
function parseText<B>(
  text: string,
  mode: PayloadMode,
  batcher: EventBatcher<B>,
  problem: ProblemReporter,
  failedAlready: boolean,
): void {
  if (mode === 'raw') {
    batcher.text(text);
    return;
  }
  const trimmed = text.trim();
  const looksJson = /^[[{"\d-]|^(true|false|null)$/.test(trimmed);
  if (!failedAlready && (mode === 'json' || looksJson)) {
    const value = parsed(trimmed);
    if (value !== undefined) {
      batcher.value(value);
      return;
    }
  }
  if (mode === 'json') problem('invalid-json', { sample: trimmed.slice(0, 200) });
  else batcher.text(text);
}

/** The JSON value of `text`, or undefined when it is not JSON (no JSON text parses to undefined). */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The content opens a JSON array that its first line does not close (a pretty-printed array). */
function opensMultiLineArray(firstLine: string, mode: PayloadMode): boolean {
  const line = firstLine.trim();
  if (!line.startsWith('[')) return false;
  try {
    JSON.parse(line);
    return false;
  } catch {}
  return mode === 'json' || /^\[\s*([[{]|$)/.test(line);
}

/** The first line (up to `maxBytes`), decoded, and the chunks again from their start. */
async function peekFirstLine(
  chunks: AsyncIterable<Buffer>,
  maxBytes: number,
): Promise<{ firstLine: string; chunks: AsyncIterable<Buffer> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let seen = 0;
  let end = -1;
  while (end === -1 && seen <= maxBytes) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    const nl = next.value.indexOf(10);
    end = nl === -1 ? -1 : seen + nl;
    seen += next.value.length;
  }
  const firstLine =
    seen > maxBytes && end === -1 ? '' : Buffer.concat(head).toString('utf8', 0, end === -1 ? seen : end);
  const rest = replayed(head, iterator);
  return { firstLine, chunks: rest };
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
