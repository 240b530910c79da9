/**
 * JsonBytes writes what JSON.stringify writes, to the byte: a seeded fuzz of numbers (short
 * decimals, long ones, huge, tiny, negative, integers) and strings (ASCII, escapes, control
 * characters, non-ASCII, lone surrogates), plus the other JSON values.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom, testSeed } from '../../../test/helpers/random.ts';
import { JsonBytes } from './json-bytes.ts';

/** The value's bytes, written after a few others into a writer that starts too small. */
function written(value: unknown): string {
  const out = new JsonBytes(4);
  out.raw(Buffer.from('ab,'));
  out.json(value);
  return out.bytes.toString('utf8', 3, out.length);
}

describe('JsonBytes', () => {
  it('writes numbers, strings and the other values as JSON.stringify does', () => {
    for (const value of [
      0,
      -0,
      1,
      -1,
      0.25,
      1.005,
      0.1 + 0.2,
      123456789012345,
      1e15,
      1e21,
      1.5e300,
      1e-6,
      1e-7,
      5e-324,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      'plain',
      '',
      'a"b',
      'back\\slash',
      'tab\t',
      '\u007f',
      'é',
      '😀',
      '\ud800',
      true,
      false,
      null,
      [1, 'x'],
      { a: { b: [null] } },
    ])
      expect(written(value), String(value)).toBe(JSON.stringify(value));
  });

  it('fuzz: random numbers and strings', () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const number = () => {
      const scale = 10 ** (Math.floor(random() * 40) - 20);
      const raw = (random() - 0.5) * scale;
      return random() < 0.5 ? Number(raw.toFixed(Math.floor(random() * 12))) : raw;
    };
    const text = () => {
      let s = '';
      const length = Math.floor(random() * 12);
      for (let i = 0; i < length; i++)
        s += String.fromCharCode(
          random() < 0.8 ? 0x20 + Math.floor(random() * 95) : Math.floor(random() * 0xffff),
        );
      return s;
    };
    for (let i = 0; i < 50_000; i++) {
      const value = random() < 0.6 ? number() : text();
      expect(written(value), `seed ${seed}`).toBe(JSON.stringify(value));
    }
  });
});
