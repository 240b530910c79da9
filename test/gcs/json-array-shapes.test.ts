/**
 * The shapes of JSON arrays the `json` and `auto` payload modes read (payload.ts,
 * json-array.ts): elements that are arrays come out as the same events whether the array
 * is on one line or pretty-printed, and a UTF-8 byte order mark before the content is not
 * part of it. The same on the main thread (as event objects and as JSON lines) and on a
 * read thread.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventObjects } from '../../functions/runner/inputs/gcs/batches.ts';
import { contentEvents } from '../../functions/runner/inputs/gcs/payload.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import { type GcsTestEnv, gcsTestEnv, RecordingPool, type RunOptions, readWays } from './helpers.ts';

let env: GcsTestEnv;
const pool = new RecordingPool(1);

beforeAll(async () => {
  env = await gcsTestEnv();
});
afterAll(async () => {
  await pool.close();
  await env.stop();
});

const WAYS = readWays(pool);

/** `data` read as `name` (with an object after it, so that a read thread takes it): its events and problems. */
async function read(name: string, data: string | Buffer, fields: Record<string, unknown>, where: RunOptions) {
  const prefix = `${randomUUID()}/`;
  const object = `${prefix}${name}`;
  await env.put(object, data);
  await env.put(`${prefix}z.json`, '{"filler":1}\n');
  pool.readNames = [];
  const { events, reports } = await env.run(
    { 'object-names': [prefix], 'object-name-field': 'object', ...fields },
    where,
  );
  if (where.readPool) expect(pool.readNames).toContain(object);
  return {
    events: events.filter((e) => e.object === object).map(({ object: _, ...rest }: RunEvent) => rest),
    problems: reports.filter((r) => r.type === 'job-errors').map((r) => r.payload as Record<string, unknown>),
  };
}

const BOM = '\uFEFF';

describe.each(WAYS)('JSON arrays (%s)', (_, where) => {
  it.each(['auto', 'json'])(
    '%s: elements that are arrays are the same events pretty-printed as on one line',
    async (mode) => {
      const value = [[1, 2], [3, 4], 's', 5, { a: [1] }, [{ b: 2 }]];
      const expected = [
        { _raw: [1, 2] },
        { _raw: [3, 4] },
        { _raw: 's' },
        { _raw: 5 },
        { a: [1] },
        { _raw: [{ b: 2 }] },
      ];
      for (const data of [
        JSON.stringify(value, null, 2),
        JSON.stringify(value),
        '[\n  [1,2],\n  [3,4],\n  "s",\n  5,\n  {"a":[1]},\n  [{"b":2}]\n]\n',
      ]) {
        const { events, problems } = await read('a.json', data, { 'payload-mode': mode }, where);
        expect(events, data).toEqual(expected);
        expect(problems, data).toEqual([]);
      }
    },
  );

  it.each(['auto', 'json'])(
    '%s: a byte order mark before a pretty-printed array is not read',
    async (mode) => {
      const array = `[\n  {"id":1},\n  {"id":2}\n]\n`;
      for (const [name, data, preprocessors] of [
        ['a.json', `${BOM}${array}`, []],
        ['a.json.gz', gzipSync(`${BOM}${array}`), ['extension']],
        ['a.json', `${BOM}{"id":1}\n{"id":2}\n`, []],
        ['a.json', `${BOM}[{"id":1},{"id":2}]\n`, []],
      ] as const) {
        const { events, problems } = await read(name, data, { 'payload-mode': mode, preprocessors }, where);
        expect(events, `${name} ${String(data)}`).toEqual([{ id: 1 }, { id: 2 }]);
        expect(problems).toEqual([]);
      }
    },
  );

  it('a byte order mark is not part of raw text, nor of a whole object', async () => {
    const raw = await read('a.txt', `${BOM}hello\nworld\n`, { 'payload-mode': 'raw' }, where);
    expect(raw.events).toEqual([{ _raw: 'hello' }, { _raw: 'world' }]);
    for (const mode of ['raw', 'auto']) {
      const whole = await read(
        'a.txt',
        `${BOM}hello\nworld\n`,
        { 'payload-mode': mode, 'ignore-linebreaks': true },
        where,
      );
      expect(whole.events, mode).toEqual([{ _raw: 'hello\nworld\n' }]);
    }
    const json = await read(
      'a.json',
      `${BOM}[\n 1,\n 2\n]`,
      { 'payload-mode': 'json', 'ignore-linebreaks': true },
      where,
    );
    expect(json.events).toEqual([{ _raw: [1, 2] }]);
  });

  it('binary keeps every byte, a byte order mark too', async () => {
    const bytes = Buffer.from(`${BOM}[1]`);
    const { events } = await read('a.bin', bytes, { 'payload-mode': 'binary' }, where);
    expect(events).toEqual([{ _raw: bytes.toString('base64') }]);
  });
});

describe('a byte order mark cut across chunks', () => {
  it.each(['auto', 'json', 'raw'] as const)('%s: is dropped all the same', async (mode) => {
    const bytes = Buffer.from(`${BOM}[\n  {"id":1},\n  {"id":2}\n]\n`);
    for (const cuts of [[1], [2], [1, 2], [3]]) {
      const edges = [0, ...cuts, bytes.length];
      async function* chunks() {
        for (let k = 1; k < edges.length; k++) yield bytes.subarray(edges[k - 1], edges[k]);
      }
      const events: RunEvent[] = [];
      const meta = { bucket: 'b', name: 'a.json', generation: '1', size: bytes.length };
      for await (const batch of contentEvents(
        { kind: 'bytes', chunks: chunks(), base64: false },
        { payloadMode: mode, ignoreLinebreaks: false },
        eventObjects.batcher({ fields: {} }, meta),
        () => {},
      ))
        events.push(...batch);
      const expected =
        mode === 'raw'
          ? ['[', '  {"id":1},', '  {"id":2}', ']'].map((_raw) => ({ _raw }))
          : [{ id: 1 }, { id: 2 }];
      expect(events, String(cuts)).toEqual(expected);
    }
  });
});
