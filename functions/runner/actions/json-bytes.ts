/**
 * A JSON value written as UTF-8 bytes straight into a buffer, for the fields a line chain
 * sets (line-chain.ts). Building a string per line and encoding it afterwards cost more than
 * the rest of a `set` (`npm run bench:actions`): most values are short ASCII strings and
 * numbers, which are written here byte by byte; anything else takes JSON.stringify.
 * The bytes are JSON.stringify's, to the byte.
 *
 * @example
 *   const out = new JsonBytes();
 *   out.json(0.25); // out.bytes[0..out.length) = "0.25"
 */

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
const POWERS = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** Bytes written one value after another into a buffer that grows. */
export class JsonBytes {
  /** The buffer; replaced when it grows, so read it after writing. */
  bytes: Buffer;
  /** Bytes written: the next write goes here. */
  length = 0;

  constructor(initialBytes = 64 * 1024) {
    this.bytes = Buffer.alloc(initialBytes);
  }

  /** Makes room for `bytes` more bytes. */
  reserve(bytes: number): void {
    if (this.length + bytes <= this.bytes.length) return;
    const grown = Buffer.alloc(Math.max(this.bytes.length * 2, this.length + bytes));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  /** Raw bytes (a key, a comma, a member's text): `source[start..end)`. */
  raw(source: Uint8Array, start = 0, end = source.length): void {
    const length = end - start;
    this.reserve(length);
    const bytes = this.bytes;
    let at = this.length;
    // A byte loop beats a native copy's call up to a few dozen bytes.
    if (length > 32) bytes.set(source.subarray(start, end), at);
    else for (let i = start; i < end; i++) bytes[at++] = source[i]!;
    this.length += length;
  }

  /** A JSON value, as JSON.stringify writes it. */
  json(value: unknown): void {
    switch (typeof value) {
      case 'number':
        this.reserve(32);
        this.length = writeNumber(this.bytes, this.length, value);
        return;
      case 'string': {
        this.reserve(value.length + 2);
        const end = writeAsciiString(this.bytes, this.length, value);
        if (end >= 0) this.length = end;
        else this.text(JSON.stringify(value));
        return;
      }
      case 'boolean':
        this.raw(value ? TRUE : FALSE);
        return;
      default:
        if (value === null) this.raw(NULL);
        else this.text(JSON.stringify(value));
    }
  }

  /** Text as UTF-8. */
  text(text: string): void {
    this.reserve(text.length * 3);
    this.length += this.bytes.write(text, this.length, 'utf8');
  }
}

/** `"text"` when every character is printable ASCII that JSON writes as itself; -1 otherwise (nothing to keep). */
function writeAsciiString(buffer: Uint8Array, at: number, text: string): number {
  buffer[at++] = 0x22;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) return -1;
    buffer[at++] = c;
  }
  buffer[at++] = 0x22;
  return at;
}

/**
 * A number as JSON.stringify writes it (needs 32 bytes of room). Integers and decimals of
 * up to 15 significant digits are written digit by digit: the fewest decimals that read
 * back as the same double are the shortest form JavaScript prints, and with at most 15
 * digits no other decimal of that length reads back the same. The rest take String().
 */
function writeNumber(buffer: Uint8Array, at: number, value: number): number {
  if (!Number.isFinite(value)) return writeLatin1(buffer, at, 'null');
  let n = value;
  if (n < 0) {
    buffer[at++] = 0x2d;
    n = -n;
  }
  if (n < 1e15 && n >= 1e-6) {
    for (let decimals = 0; decimals < POWERS.length; decimals++) {
      const scale = POWERS[decimals]!;
      const digits = Math.round(n * scale);
      if (digits >= 1e15) break;
      if (digits / scale !== n) continue;
      const whole = Math.floor(digits / scale);
      at = writeDigits(buffer, at, whole);
      if (decimals === 0) return at;
      buffer[at++] = 0x2e;
      writeFixedDigits(buffer, at, digits - whole * scale, decimals);
      return at + decimals;
    }
  } else if (n === 0) {
    buffer[at] = 0x30;
    return at + 1;
  }
  return writeLatin1(buffer, at, String(n));
}

function writeDigits(buffer: Uint8Array, at: number, n: number): number {
  let length = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) length++;
  writeFixedDigits(buffer, at, n, length);
  return at + length;
}

/** The whole number `n` (below 10^15) as exactly `length` digits, zeros in front. */
function writeFixedDigits(buffer: Uint8Array, at: number, n: number, length: number): void {
  let d = at + length - 1;
  // Doubles' % and floor cost more than int32 arithmetic: use that once n fits.
  for (; n > 0x7fffffff; d--) {
    const rest = Math.floor(n / 10);
    buffer[d] = 0x30 + (n - rest * 10);
    n = rest;
  }
  let small = n | 0;
  for (; d >= at; d--) {
    const rest = (small / 10) | 0;
    buffer[d] = 0x30 + (small - rest * 10);
    small = rest;
  }
}

function writeLatin1(buffer: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i);
  return at;
}
