import { describe, expect, it } from 'vitest';
import { diffContext, parseExportFile } from '../../web/src/lib/context-diff.ts';
import { parseTyped, toText, typeName } from '../../web/src/lib/typed-value.ts';

describe('the import preview', () => {
  it('lists added, changed and removed keys; objects compare by content, not key order', () => {
    const current = { a: 1, b: 'x', c: { p: 1, q: [1, 2] }, gone: true };
    const next = { a: 1, b: 'y', c: { q: [1, 2], p: 1 }, fresh: [1] };
    expect(diffContext(current, next)).toEqual({
      added: [{ key: 'fresh', after: [1] }],
      changed: [{ key: 'b', before: 'x', after: 'y' }],
      removed: [{ key: 'gone', before: true }],
      unchanged: 2,
    });
  });

  it('tells a type change apart (1 is not "1")', () => {
    expect(diffContext({ n: 1 }, { n: '1' }).changed).toEqual([{ key: 'n', before: 1, after: '1' }]);
  });

  it('reads an export file and explains a file that is not one', () => {
    expect(parseExportFile('{"format":"sluice-context/v1","global":{"a":1}}')).toMatchObject({
      ok: true,
      global: { a: 1 },
    });
    expect(parseExportFile('{"a":1')).toMatchObject({
      ok: false,
      error: expect.stringContaining('not JSON'),
    });
    expect(parseExportFile('{"global":{}}')).toMatchObject({
      ok: false,
      error: expect.stringContaining('sluice-context/v1'),
    });
    expect(parseExportFile('{"format":"sluice-context/v1","global":[1]}')).toMatchObject({
      ok: false,
      error: expect.stringContaining('"global" must be a JSON object'),
    });
  });
});

describe('typed values in the key editor', () => {
  it('parses each type and says what does not fit', () => {
    expect(parseTyped('string', ' 42 ')).toEqual({ ok: true, value: ' 42 ' });
    expect(parseTyped('number', '42.5')).toEqual({ ok: true, value: 42.5 });
    expect(parseTyped('number', 'forty')).toEqual({ ok: false, error: 'not a number' });
    expect(parseTyped('number', '')).toEqual({ ok: false, error: 'not a number' });
    expect(parseTyped('boolean', 'false')).toEqual({ ok: true, value: false });
    expect(parseTyped('json', '{"a":[1]}')).toEqual({ ok: true, value: { a: [1] } });
    expect(parseTyped('json', '[1,')).toMatchObject({
      ok: false,
      error: expect.stringContaining('not valid JSON'),
    });
    expect(parseTyped('json', '"text"')).toMatchObject({
      ok: false,
      error: expect.stringContaining('object or array'),
    });
  });

  it('names types and writes values back as editable text', () => {
    expect([typeName('a'), typeName(1), typeName(true), typeName([]), typeName({})]).toEqual([
      'string',
      'number',
      'boolean',
      'array',
      'object',
    ]);
    expect(toText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(toText(false)).toBe('false');
  });
});
