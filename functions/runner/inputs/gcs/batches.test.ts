/**
 * JSON lines are handed on as read, with the metadata fields spliced in: the text must be
 * exactly what serializing the event would give, field for field, and the same events as
 * the event-object form gives any other output.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createPrintOutput } from '../../outputs/print/index.ts';
import type { RunEvent } from '../../types.ts';
import { type EventBatcher, eventObjects, jsonLines } from './batches.ts';
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
});

describe('rows of a parquet slice, serialized together', () => {
  const deep = (levels: number): unknown => (levels === 0 ? 1 : { d: deep(levels - 1) });

  const rows = () => [
    { id: 1, s: 'a},{"id":2', nested: [{ x: 3 }, { x: 4 }] },
    { id: 2, s: 'é', nested: [] },
    { id: 3, s: null, nested: [{ x: '},{"id":' }] },
  ];

  it('splits the slice into one line per row, metadata spliced in, whatever the strings hold', () => {
    const batcher = jsonLines.batcher({ fields: { objectName: 'object' } }, meta);
    batcher.values(rows());
    const batch = batcher.take()!;
    expect(batch.count).toBe(3);
    const object = '"object":"logs/a \\"1\\".json"';
    expect(Buffer.concat(batch.chunks).toString()).toBe(
      `{"id":1,"s":"a},{\\"id\\":2","nested":[{"x":3},{"x":4}],${object}}\n` +
        `{"id":2,"s":"é","nested":[],${object}}\n{"id":3,"s":null,"nested":[{"x":"},{\\"id\\":"}],${object}}\n`,
    );
  });

  it.each([
    ['one stringify for the whole slice', rows()],
    [
      'a nested array of objects with the same first key',
      [
        { id: 1, n: [{ id: 2 }, { id: 3 }] },
        { id: 4, n: [] },
      ],
    ],
    ['rows with different first keys', [{ id: 1 }, { other: 2 }, { id: 3 }]],
    ['a row with a metadata key', [{ id: 1 }, { id: 2, object: 'data' }, { id: 3 }]],
    ['a row nested deeper than the scanner goes', [{ id: 1 }, { id: 2, deep: deep(300) }, { id: 3 }]],
    ['a first key that is not a plain name', [{ 'a b': 1 }, { 'a b': 2 }]],
    ['values that are not objects', [{ id: 1 }, [1, 2], 'x', null]],
    ['empty objects', [{}, {}]],
    ['a single row', [{ id: 1 }]],
  ])('%s: the same lines as one by one', (_, values) => {
    const plan = { fields: { objectName: 'object', contentLength: 'size' } };
    const together = jsonLines.batcher(plan, meta);
    together.values(values);
    const oneByOne = jsonLines.batcher(plan, meta);
    for (const value of structuredClone(values)) oneByOne.value(value);
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
        values.map((value) => JSON.stringify(value)),
        plan,
      ),
    );
  });
});
