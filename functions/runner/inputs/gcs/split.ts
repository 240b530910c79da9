/**
 * Splits decoded text into lines for line-per-event reading. Works on whole chunks
 * with `indexOf` (no per-line promises, no readline): each yielded array holds the
 * complete lines of one chunk. Blank lines are dropped, a trailing `\r` is removed, and
 * a line longer than `maxLineChars` is reported through `onTooLong` and skipped,
 * without ever being held in memory whole.
 *
 * @example
 *   for await (const lines of splitLines(text, { maxLineChars: MAX_LINE_CHARS, onTooLong })) handle(lines);
 */

/** Longest line read as one event (8 Mi characters); longer lines are reported and skipped. */
export const MAX_LINE_CHARS = 8 * 1024 * 1024;

export interface SplitOptions {
  maxLineChars: number;
  /** Called with the 1-based line number and the length seen before giving up on it. */
  onTooLong(line: number, length: number): void;
}

export async function* splitLines(
  text: AsyncIterable<string>,
  options: SplitOptions,
): AsyncGenerator<string[]> {
  let carry = '';
  let skipping = false;
  let lineNo = 0;
  for await (const chunk of text) {
    const lines: string[] = [];
    let pos = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', pos);
      if (nl === -1) break;
      lineNo++;
      if (skipping) {
        skipping = false;
      } else if (carry.length + nl - pos > options.maxLineChars) {
        options.onTooLong(lineNo, carry.length + nl - pos);
      } else {
        push(lines, carry ? carry + chunk.slice(pos, nl) : chunk.slice(pos, nl));
      }
      carry = '';
      pos = nl + 1;
    }
    if (pos < chunk.length && !skipping) {
      if (carry.length + chunk.length - pos > options.maxLineChars) {
        options.onTooLong(lineNo + 1, carry.length + chunk.length - pos);
        carry = '';
        skipping = true;
      } else {
        carry += pos === 0 ? chunk : chunk.slice(pos);
      }
    }
    if (lines.length) yield lines;
  }
  if (carry && !skipping) {
    const last: string[] = [];
    push(last, carry);
    if (last.length) yield last;
  }
}

function push(lines: string[], line: string): void {
  const end = line.charCodeAt(line.length - 1) === 13 ? line.length - 1 : line.length;
  const text = end === line.length ? line : line.slice(0, end);
  if (text.length === 0 || (text.trim().length === 0 && text.length < 64)) return;
  lines.push(text);
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
