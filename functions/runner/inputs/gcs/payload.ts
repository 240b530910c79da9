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
 * @example
 *   for await (const events of contentEvents(content, plan, shaper, onProblem)) deliver(events);
 */
import type { RunEvent } from '../../types.ts';
import type { PayloadMode } from './config.ts';
import type { EventShaper } from './fields.ts';
import { splitJsonArrays } from './json-array.ts';
import type { Content } from './preprocess.ts';
import { decodeUtf8, MAX_LINE_CHARS, splitLines } from './split.ts';

/** Largest object read as a single event (ignore-linebreaks, binary). */
export const MAX_OBJECT_EVENT_BYTES = 64 * 1024 * 1024;

export interface PayloadOptions {
  payloadMode: PayloadMode;
  ignoreLinebreaks: boolean;
  maxLineChars?: number;
  maxObjectBytes?: number;
}

/** A problem with part of an object: reported as `job-errors`, the rest is still read. */
export type ProblemReporter = (reason: string, detail?: Record<string, unknown>) => void;

export async function* contentEvents(
  content: Content,
  options: PayloadOptions,
  shaper: EventShaper,
  problem: ProblemReporter,
): AsyncGenerator<RunEvent[]> {
  if (content.kind === 'rows') {
    for await (const rows of content.rows) yield rows.map((row) => shaper.fromValue(row));
    return;
  }
  const mode = options.payloadMode;
  if (mode === 'binary' || options.ignoreLinebreaks) {
    const whole = await collect(content.chunks, options.maxObjectBytes ?? MAX_OBJECT_EVENT_BYTES);
    if (!whole) {
      problem('object-too-large', { limit_bytes: options.maxObjectBytes ?? MAX_OBJECT_EVENT_BYTES });
      return;
    }
    if (mode === 'binary') {
      yield [shaper.fromText(content.base64 ? whole.toString('latin1') : whole.toString('base64'))];
      return;
    }
    const event = parseText(whole.toString('utf8'), mode, shaper, problem, false);
    if (event) yield [event];
    return;
  }

  const maxLineChars = options.maxLineChars ?? MAX_LINE_CHARS;
  const onTooLong = (line: number, length: number) =>
    problem('line-too-long', { line, length, limit_chars: maxLineChars });
  let text: AsyncIterable<string> = decodeUtf8(content.chunks);
  if (mode === 'json' || mode === 'auto') {
    const peeked = await peekFirstLine(text, maxLineChars);
    text = peeked.text;
    if (opensMultiLineArray(peeked.firstLine, mode)) {
      const onElementTooLong = (element: number, length: number) =>
        problem('element-too-long', { element, length, limit_chars: maxLineChars });
      for await (const texts of splitJsonArrays(text, {
        maxChars: maxLineChars,
        onTooLong: onElementTooLong,
      })) {
        yield lineEvents(texts, mode, shaper, problem, false);
      }
      return;
    }
  }
  for await (const lines of splitLines(text, { maxLineChars, onTooLong })) {
    const events =
      mode === 'raw'
        ? lines.map((line) => shaper.fromText(line))
        : lineEvents(lines, mode, shaper, problem, true);
    if (events.length) yield events;
  }
}

function lineEvents(
  lines: string[],
  mode: PayloadMode,
  shaper: EventShaper,
  problem: ProblemReporter,
  /** The texts are whole lines: a JSON array on one is expanded, an object printed as read. */
  fromLines: boolean,
): RunEvent[] {
  const events: RunEvent[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const first = line.charCodeAt(0);
    // `{`: by far the most common line (NDJSON); parse and use the object as the event.
    if (first === 123) {
      try {
        // A line can be printed as read; an array element's text may span lines.
        const value = JSON.parse(line);
        events.push(fromLines ? shaper.fromJsonObject(value, line) : shaper.fromValue(value));
        continue;
      } catch {}
    } else if (first === 91 && fromLines) {
      try {
        const value: unknown = JSON.parse(line);
        if (Array.isArray(value)) {
          for (const element of value) events.push(shaper.fromValue(element));
          continue;
        }
      } catch {}
    }
    const event = parseText(line, mode, shaper, problem, first === 123 || first === 91);
    if (event) events.push(event);
  }
  return events;
}

/** One text as one event; `failedAlready` skips a second JSON.parse of text known not to parse. */
function parseText(
  text: string,
  mode: PayloadMode,
  shaper: EventShaper,
  problem: ProblemReporter,
  failedAlready: boolean,
): RunEvent | undefined {
  if (mode === 'raw') return shaper.fromText(text);
  const trimmed = text.trim();
  const looksJson = /^[[{"\d-]|^(true|false|null)$/.test(trimmed);
  if (!failedAlready && (mode === 'json' || looksJson)) {
    try {
      return shaper.fromValue(JSON.parse(trimmed));
    } catch {}
  }
  if (mode === 'json') {
    problem('invalid-json', { sample: trimmed.slice(0, 200) });
    return undefined;
  }
  return shaper.fromText(text);
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

async function peekFirstLine(
  text: AsyncIterable<string>,
  maxChars: number,
): Promise<{ firstLine: string; text: AsyncIterable<string> }> {
  const iterator = text[Symbol.asyncIterator]();
  const head: string[] = [];
  let seen = 0;
  let firstLine = '';
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    const nl = next.value.indexOf('\n');
    if (nl !== -1) {
      firstLine = head.join('').split('\n', 1)[0]!;
      break;
    }
    seen += next.value.length;
    if (seen > maxChars) break;
    // Leading blank space does not decide anything yet; keep reading.
    if (next.value.trim() === '') continue;
  }
  if (!firstLine && seen <= maxChars) firstLine = head.join('');
  const rest = (async function* () {
    yield* head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  })();
  return { firstLine, text: rest };
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
