/**
 * JSON lines are handed on as read, with the metadata fields spliced in: the text must be
 * exactly what serializing the event would give, field for field, and the same events as
 * the event-object form gives any other output.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createPrintOutput } from '../../outputs/print/index.ts';
import type { RunEvent } from '../../types.ts';
import { RowSlice } from './arrow-rows.ts';
import { columnsJson, type EventBatcher, eventObjects, jsonLines } from './batches.ts';
import type { ShapePlan } from './fields.ts';
import type { ObjectMeta } from './list.ts';

const meta: ObjectMeta = { bucket: 'b', name: 'logs/a "1".json', generation: '7', size: 42 };

/** What `print` writes for `lines` read as JSON lines (the path of a gcs → print job). */
async function printed(lines: string[], plan: ShapePlan): Promise<string[]> {
  const batcher = jsonLines.batcher(plan, meta);
  addAll(batcher, lines);
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => {
    text += chunk;
  });
  await createPrintOutput(stream).writeJsonLines!(batcher.take()!);
  return text.split('\n').filter(Boolean);
}

/** The events of the same lines as objects (what an output without JSON lines receives). */
function objects(lines: string[], plan: ShapePlan): RunEvent[] {
  const batcher = eventObjects.batcher(plan, meta);
  addAll(batcher, lines);
  return batcher.take()!;
}

/**
 * Lines as payload.ts adds them, one chunk at a time: as their bytes while the batcher
 * takes them, each line it stops at parsed, then on from the next.
 */
function addAll(batcher: EventBatcher<unknown>, lines: string[]): void {
  // Inside a larger buffer, as lines are: the batcher must keep to its spans.
  const bytes = Buffer.from(`{"before":1}\n${lines.join('\n')}\n{"after":2}`);
  const spans: number[] = [];
  let at = Buffer.byteLength('{"before":1}\n');
  for (const line of lines) {
    spans.push(at, at + Buffer.byteLength(line));
    at += Buffer.byteLength(line) + 1;
  }
  for (let i = 0; i < spans.length; i += 2) {
    i = batcher.lines(bytes, spans, i);
    if (i === spans.length) break;
    batcher.value(JSON.parse(bytes.toString('utf8', spans[i], spans[i + 1])));
  }
}

const fields = { objectName: 'object', contentLength: 'size' };

describe('JSON lines handed on as read', () => {
  it('keeps the line and splices the metadata fields in, escaped', async () => {
    const lines = ['{"a":1,"b":"x"}', '{ "a" : 2 }  ', '{}', ' { } ', '{"nested":{"c":[1,2]}}'];
    const text = await printed(lines, { fields });
    expect(text).toEqual([
      '{"a":1,"b":"x","object":"logs/a \\"1\\".json","size":42}',
      '{ "a" : 2 ,"object":"logs/a \\"1\\".json","size":42}',
      '{"object":"logs/a \\"1\\".json","size":42}',
      ' { "object":"logs/a \\"1\\".json","size":42}',
      '{"nested":{"c":[1,2]},"object":"logs/a \\"1\\".json","size":42}',
    ]);
    expect(text.map((line) => JSON.parse(line))).toEqual(objects(lines, { fields }));
  });

  it('a batch outgrowing its buffer keeps every line', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ i, pad: 'é'.repeat(100) }));
    const text = await printed(lines, { fields });
    expect(text.map((line) => JSON.parse(line))).toEqual(objects(lines, { fields }));
  });

  it('without metadata fields, hands the line on unchanged', async () => {
    expect(await printed(['{"a":1.50,"é":"\\u00e9"}'], { fields: {} })).toEqual(['{"a":1.50,"é":"\\u00e9"}']);
  });

  it('a data key named like a metadata field: serialized again, the metadata wins, no duplicate key', async () => {
    const lines = ['{"object":"from data","a":1}', '{"a":"the word \\"object\\" in a value"}'];
    const text = await printed(lines, { fields });
    expect(text[0]).toBe('{"object":"logs/a \\"1\\".json","a":1,"size":42}');
    expect(text.map((line) => JSON.parse(line))).toEqual(objects(lines, { fields }));
  });

  it('with data-field the event is built and serialized', async () => {
    const plan = { fields, dataField: 'data' };
    const text = await printed(['{"a":1}'], plan);
    expect(text).toEqual(['{"data":{"a":1},"object":"logs/a \\"1\\".json","size":42}']);
    expect(text.map((line) => JSON.parse(line))).toEqual(objects(['{"a":1}'], plan));
  });

  it('values, texts and whole events become one JSON line each, in order', () => {
    const batcher = jsonLines.batcher({ fields: { objectName: 'object' } }, meta);
    batcher.value([1, 2]);
    batcher.text('plain text');
    batcher.event({ name: 'x' });
    const batch = batcher.take()!;
    expect(batch.count).toBe(3);
    expect(Buffer.concat(batch.chunks).toString()).toBe(
      '{"_raw":[1,2],"object":"logs/a \\"1\\".json"}\n{"_raw":"plain text","object":"logs/a \\"1\\".json"}\n{"name":"x"}\n',
    );
    expect(batcher.take()).toBeUndefined();
  });

  it('joins batches in order and counts their events', () => {
    const joined = jsonLines.join([
      { chunks: [Buffer.from('a\n')], count: 1 },
      { chunks: [Buffer.from('b\n'), Buffer.from('c\n')], count: 2 },
    ]);
    expect(Buffer.concat(joined.chunks).toString()).toBe('a\nb\nc\n');
    expect(joined.count).toBe(3);
    expect(eventObjects.join([[{ a: 1 }], [{ b: 2 }]])).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('a joined batch releases each of its parts (the buffers of every read thread in it)', () => {
    const released: string[] = [];
    const joined = jsonLines.join([
      { chunks: [Buffer.from('a\n')], count: 1, release: () => released.push('a') },
      { chunks: [Buffer.from('b\n')], count: 1 },
      { chunks: [Buffer.from('c\n')], count: 1, release: () => released.push('c') },
    ]);
    joined.release!();
    expect(released).toEqual(['a', 'c']);
    expect(jsonLines.join([{ chunks: [Buffer.from('d\n')], count: 1 }]).release).toBeUndefined();
  });
});

describe('rows of a parquet slice', () => {
  const deep = (levels: number): unknown => (levels === 0 ? 1 : { d: deep(levels - 1) });

  /** A slice from rows that share their keys (the columns are the keys' values). */
  const sliceOf = (rows: Record<string, unknown>[], names = Object.keys(rows[0] ?? {})) =>
    new RowSlice(
      names,
      names.map((name) => rows.map((row) => row[name])),
      rows.length,
    );

  const tricky = () =>
    sliceOf([
      { id: 1, s: 'a},{"id":2', nested: [{ x: 3 }, { x: '],"y":[' }] },
      { id: 2, s: 'é\u2028"\\', nested: [] },
      { id: 3, s: null, nested: { x: '},{"id":' } },
    ]);

  it('writes one line per row, metadata spliced in, whatever the values hold', () => {
    const batcher = jsonLines.batcher({ fields: { objectName: 'object' } }, meta);
    batcher.rows(tricky());
    const batch = batcher.take()!;
    expect(batch.count).toBe(3);
    const object = '"object":"logs/a \\"1\\".json"';
    expect(Buffer.concat(batch.chunks).toString()).toBe(
      `{"id":1,"s":"a},{\\"id\\":2","nested":[{"x":3},{"x":"],\\"y\\":["}],${object}}\n` +
        `{"id":2,"s":"é\u2028\\"\\\\","nested":[],${object}}\n` +
        `{"id":3,"s":null,"nested":{"x":"},{\\"id\\":"},${object}}\n`,
    );
  });

  const float = new Float64Array([1.5, Number.NaN, -0, Number.POSITIVE_INFINITY, 1 / 3, 1e21]);
  const typed = new RowSlice(
    ['f', 'i', 'u', 'g'],
    [float, new Int32Array([1, -2, 3, 4, 5, 6]), new Uint8Array(6), new Float32Array(float)],
    6,
  );
  const integerNames = sliceOf([{ b: 1, 10: 'x', 2: true, a: null }], ['b', '10', '2', 'a']);
  const withUndefined = sliceOf([
    { id: 1, u: undefined },
    { id: 2, u: 3 },
  ]);
  const metadataName = sliceOf([
    { id: 1, object: 'data' },
    { id: 2, object: 'more' },
  ]);
  const repeated = new RowSlice(['a', 'a'], [[1], [2]], 1);
  const proto = new RowSlice(['__proto__', 'b'], [[{ x: 1 }], [2]], 1);
  const noColumns = new RowSlice([], [], 2);

  it('writes from the columns unless a row would serialize differently', () => {
    const reserved = ['object', 'size'];
    // The tricky values take the fast path: one JSON text per column, keys in row order.
    const fast = columnsJson(tricky(), reserved);
    expect(fast?.keys.map((key) => Buffer.from(key).toString())).toEqual(['"id":', '"s":', '"nested":']);
    expect(fast?.texts.map((text) => JSON.parse(text))).toEqual([
      [1, 2, 3],
      ['a},{"id":2', 'é\u2028"\\', null],
      [[{ x: 3 }, { x: '],"y":[' }], [], { x: '},{"id":' }],
    ]);
    expect(columnsJson(typed, reserved)?.texts[0]).toBe('[1.5,null,0,null,0.3333333333333333,1e+21]');
    expect(columnsJson(integerNames, reserved)?.keys.map((key) => Buffer.from(key).toString())).toEqual([
      '"2":',
      '"10":',
      '"b":',
      '"a":',
    ]);
    for (const slice of [withUndefined, metadataName, repeated, proto, noColumns])
      expect(columnsJson(slice, reserved)).toBeUndefined();
  });

  it.each<[string, RowSlice]>([
    ['values of every JSON kind', tricky()],
    ['typed-array columns (NaN and Infinity become null)', typed],
    ['integer-like names, which objects put first', integerNames],
    ['a column holding undefined (a row leaves its key out)', withUndefined],
    ['a column named like a metadata field', metadataName],
    ['repeated names', repeated],
    ['a column named __proto__', proto],
    [
      'a value nested deeper than the scanner goes',
      sliceOf([
        { id: 1, deep: deep(300) },
        { id: 2, deep: 1 },
      ]),
    ],
    ['no columns', noColumns],
    ['a single row', sliceOf([{ id: 1 }])],
  ])('%s: the same lines as one row at a time', (_, slice) => {
    const plan = { fields: { objectName: 'object', contentLength: 'size' } };
    const together = jsonLines.batcher(plan, meta);
    together.rows(slice);
    const oneByOne = jsonLines.batcher(plan, meta);
    for (const row of structuredClone(slice.rows())) oneByOne.value(row);
    const text = (batcher: EventBatcher<{ chunks: Buffer[]; count: number }>) => {
      const batch = batcher.take()!;
      return { text: Buffer.concat(batch.chunks).toString(), count: batch.count };
    };
    const expected = text(oneByOne);
    expect(text(together)).toEqual(expected);
    expect(
      expected.text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual(
      objects(
        slice.rows().map((row) => JSON.stringify(row)),
        plan,
      ),
    );
  });
});

describe('rows of random slices', () => {
  /** A tiny seeded PRNG (mulberry32), so that a failure repeats. */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const CHARS = [
    'a',
    ' ',
    '"',
    '\\',
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    '\n',
    '\u0001',
    'é',
    '😀',
    '\u2028',
    '\ud800',
  ];

  function value(rnd: () => number, depth: number): unknown {
    const kind = Math.floor(rnd() * (depth > 2 ? 5 : 7));
    if (kind === 0) return null;
    if (kind === 1) return rnd() < 0.5;
    if (kind === 2)
      return rnd() < 0.5 ? Math.floor(rnd() * 2000) - 1000 : (rnd() - 0.5) * 10 ** (rnd() * 40 - 20);
    if (kind <= 4)
      return Array.from(
        { length: Math.floor(rnd() * 6) },
        () => CHARS[Math.floor(rnd() * CHARS.length)],
      ).join('');
    if (kind === 5) return Array.from({ length: Math.floor(rnd() * 3) }, () => value(rnd, depth + 1));
    return Object.fromEntries(
      Array.from({ length: Math.floor(rnd() * 3) }, (_, i) => [`k${i}${CHARS[i]}`, value(rnd, depth + 1)]),
    );
  }

  it('give the same lines from their columns as one row at a time', () => {
    const rnd = random(20261123);
    const plan = { fields: { objectName: 'object' } };
    let columnar = 0;
    for (let n = 0; n < 300; n++) {
      const count = 1 + Math.floor(rnd() * 8);
      const names = Array.from({ length: Math.floor(rnd() * 5) }, (_, c) =>
        rnd() < 0.2 ? String(c * 7) : `c${c}${CHARS[Math.floor(rnd() * CHARS.length)]}`,
      );
      const columns = names.map(() =>
        rnd() < 0.2
          ? Float64Array.from({ length: count }, () => (rnd() < 0.1 ? Number.NaN : rnd() * 1e6))
          : Array.from({ length: count }, () => value(rnd, 0)),
      );
      const slice = new RowSlice(names, columns, count);
      if (columnsJson(slice, ['object'])) columnar++;
      const together = jsonLines.batcher(plan, meta);
      together.rows(slice);
      const oneByOne = jsonLines.batcher(plan, meta);
      for (const row of slice.rows()) oneByOne.value(row);
      expect(Buffer.concat(together.take()!.chunks).toString(), JSON.stringify(names)).toBe(
        Buffer.concat(oneByOne.take()!.chunks).toString(),
      );
    }
    expect(columnar).toBeGreaterThan(200);
  });
});
