/**
 * The scanner vouches for a line only when `JSON.parse` agrees: never more lenient,
 * checked on hand-picked edge cases and on thousands of random and randomly broken lines
 * (seeded, so a failure repeats). And it must not refuse ordinary valid lines, or the fast
 * path would quietly be lost.
 */
import { describe, expect, it } from 'vitest';
import { JsonLineSplicer, MAX_SCAN_DEPTH, NOT_FAST, scanJsonObject } from './json-splicer.ts';

const reserved = [Buffer.from('object'), Buffer.from('size')];

function scan(text: string | Buffer): number {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  return scanJsonObject(bytes, 0, bytes.length, reserved);
}

/** What JSON.parse says of the line, decoded as the slow path decodes it. */
function parsesAsObject(bytes: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** A tiny seeded PRNG (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SAFE_KEY = 'abcdefgh_é9';
const STRING_CHARS = [
  'a',
  'Z',
  ' ',
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\u0001',
  'é',
  '€',
  '😀',
  '\u2028',
  '}',
  '{',
  ',',
];

function generate(rnd: () => number, depth: number): unknown {
  const pick = rnd();
  if (depth > 3 || pick < 0.35) {
    const kind = Math.floor(rnd() * 7);
    if (kind === 0) return null;
    if (kind === 1) return rnd() < 0.5;
    if (kind === 2) return Math.floor(rnd() * 2000) - 1000;
    if (kind === 3) return (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20);
    return Array.from(
      { length: Math.floor(rnd() * 6) },
      () => STRING_CHARS[Math.floor(rnd() * STRING_CHARS.length)],
    ).join('');
  }
  if (pick < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => generate(rnd, depth + 1));
  return object(rnd, depth + 1, true);
}

function object(rnd: () => number, depth: number, anyKeys: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const members = Math.floor(rnd() * 5);
  for (let m = 0; m < members; m++) {
    const key = anyKeys
      ? String(generate(rnd, 9))
      : Array.from(
          { length: 1 + Math.floor(rnd() * 5) },
          () => SAFE_KEY[Math.floor(rnd() * SAFE_KEY.length)],
        ).join('');
    out[key] = generate(rnd, depth);
  }
  return out;
}

/** JSON text with random JSON whitespace between tokens (outside strings). */
function spaced(rnd: () => number, json: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    out += c;
    let tokenEnds = false;
    if (inString) {
      if (c === '\\') out += json[++i];
      else if (c === '"') {
        inString = false;
        tokenEnds = true;
      }
    } else if (c === '"') inString = true;
    else tokenEnds = '{}[],:'.includes(c);
    if (tokenEnds && rnd() < 0.2) out += [' ', '\t', '\r', '\n'][Math.floor(rnd() * 4)];
  }
  return out;
}

const BREAKERS = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '\\',
  '-',
  '0',
  '1',
  '.',
  'e',
  'E',
  '+',
  't',
  'n',
  'u',
  ' ',
  '\u0000',
  '\u007f',
];

describe('scanJsonObject', () => {
  it('finds the closing brace of an object, around JSON whitespace', () => {
    expect(scan('{"a":1}')).toBe(6);
    expect(scan(' \t{ "a" : [1, {"b": null}] }\r\n ')).toBe(27);
    expect(scan('{}')).toBe(1);
  });

  it.each([
    ['not an object', '[1]'],
    ['a string', '"x"'],
    ['trailing text', '{"a":1} x'],
    ['two objects', '{}{}'],
    ['unclosed', '{"a":1'],
    ['trailing comma', '{"a":1,}'],
    ['leading zero', '{"a":01}'],
    ['bare dot', '{"a":1.}'],
    ['empty exponent', '{"a":1e}'],
    ['plus sign', '{"a":+1}'],
    ['hex escape', '{"a":"\\x41"}'],
    ['short unicode escape', '{"a":"\\u12"}'],
    ['raw tab in a string', '{"a":"x\ty"}'],
    ['single quotes', "{'a':1}"],
    ['unquoted key', '{a:1}'],
    ['truncated literal', '{"a":tru}'],
    ['NaN', '{"a":NaN}'],
    ['vertical tab as space', '{\u000b"a":1}'],
    ['mismatched brackets', '{"a":[1}'],
    ['byte order mark', '\ufeff{"a":1}'],
  ])('refuses %s', (_, text) => {
    expect(scan(text)).toBe(NOT_FAST);
  });

  it('takes UTF-8 text as it is', () => {
    expect(scan('{"a":"é😀\u2028"}')).toBeGreaterThan(0);
  });

  it('leaves to JSON.parse: reserved and escaped top-level keys, deep nesting; nested keys are free', () => {
    expect(scan('{"a":1,"object":2}')).toBe(NOT_FAST);
    expect(scan('{"siz\\u0065":1}')).toBe(NOT_FAST);
    expect(scan('{"a":{"object":1,"size":2,"\\u0061":3}}')).toBeGreaterThan(0);
    expect(scan('{"objects":1,"siz":2}')).toBeGreaterThan(0);
    const deep = `{"a":${'['.repeat(MAX_SCAN_DEPTH)}${']'.repeat(MAX_SCAN_DEPTH)}}`;
    expect(scan(deep)).toBe(NOT_FAST);
    expect(parsesAsObject(Buffer.from(deep))).toBe(true);
  });

  it('reads only its span of a larger buffer', () => {
    const bytes = Buffer.from('{"a":1}\n{"b":2}\n');
    expect(scanJsonObject(bytes, 8, 15, reserved)).toBe(14);
    expect(scanJsonObject(bytes, 0, 5, reserved)).toBe(NOT_FAST); // `{"a":` then the rest of the buffer
  });

  it('never reads past its span, though it looks 16 bytes ahead at a time', () => {
    // Every proper prefix of the line is refused, even where the bytes just after it
    // (the closing quote, the closing brace) would complete it.
    const line = Buffer.from('{"message":"a string of more than sixteen bytes","n":[1,2.5e3,true]}');
    for (let end = 0; end < line.length; end++) expect(scanJsonObject(line, 0, end, reserved)).toBe(NOT_FAST);
    expect(scanJsonObject(line, 0, line.length, reserved)).toBe(line.length - 1);
  });

  it('agrees with JSON.parse on random lines and random breakages of them', () => {
    const rnd = random(20261123);
    let accepted = 0;
    for (let n = 0; n < 4000; n++) {
      const value = object(rnd, 0, false);
      const text = rnd() < 0.5 ? JSON.stringify(value) : spaced(rnd, JSON.stringify(value));
      const bytes = Buffer.from(text);
      const close = scan(bytes);
      // Valid, with plain top-level keys none of which is reserved: must be vouched for.
      const plain = !Object.keys(value).some((key) => key === 'object' || key === 'size');
      if (plain) {
        expect(close, JSON.stringify(text)).toBeGreaterThan(0);
        expect(
          bytes
            .subarray(close + 1)
            .toString()
            .trim(),
          text,
        ).toBe('');
        expect(bytes[close]).toBe(0x7d);
        accepted++;
      }
      // Broken copies: whatever is still vouched for must parse as an object.
      for (let m = 0; m < 5; m++) {
        const broken = Buffer.from(text);
        const edits = 1 + Math.floor(rnd() * 3);
        let mutated: Buffer = broken;
        for (let e = 0; e < edits; e++) {
          const at = Math.floor(rnd() * mutated.length);
          const what = rnd();
          const insert = Buffer.from(BREAKERS[Math.floor(rnd() * BREAKERS.length)]!);
          if (what < 0.33) mutated = Buffer.concat([mutated.subarray(0, at), mutated.subarray(at + 1)]);
          else if (what < 0.66)
            mutated = Buffer.concat([mutated.subarray(0, at), insert, mutated.subarray(at)]);
          else mutated = Buffer.concat([mutated.subarray(0, at), insert, mutated.subarray(at + 1)]);
        }
        if (scan(mutated) !== NOT_FAST) expect(parsesAsObject(mutated), mutated.toString()).toBe(true);
      }
    }
    expect(accepted).toBeGreaterThan(3000);
  });
});

describe('JsonLineSplicer.spliceArray', () => {
  const suffix = ',"object":"o"}\n';
  const splicer = new JsonLineSplicer(Buffer.from(suffix), reserved, true);

  /** The line the slow path writes for a row that may be spliced: its JSON, then the metadata. */
  const line = (row: object) => {
    const json = JSON.stringify(row);
    return json === '{}' ? `{${suffix.slice(1)}` : json.slice(0, -1) + suffix;
  };

  /** Rows may be spliced up to the first that is not an object or has a reserved or escaped top-level key. */
  const spliceable = (row: unknown) =>
    row !== null &&
    typeof row === 'object' &&
    !Array.isArray(row) &&
    Object.keys(row).every((key) => key !== 'object' && key !== 'size' && JSON.stringify(key) === `"${key}"`);

  it('gives one line per row of random slices, and stops at the first row it must leave to JSON.stringify', () => {
    const rnd = random(20261124);
    let rows = 0;
    for (let n = 0; n < 1500; n++) {
      const slice = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () =>
        rnd() < 0.05 ? generate(rnd, 4) : object(rnd, 0, rnd() < 0.1),
      );
      const { taken, output } = splicer.spliceArray(JSON.stringify(slice), slice.length);
      const expected = slice.findIndex((row) => !spliceable(row));
      expect(taken, JSON.stringify(slice)).toBe(expected === -1 ? slice.length : expected);
      expect(Buffer.from(output).toString()).toBe(
        slice
          .slice(0, taken)
          .map((row) => line(row as object))
          .join(''),
      );
      rows += taken;
    }
    expect(rows).toBeGreaterThan(3000);
  });
});
