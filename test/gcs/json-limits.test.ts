/**
 * JSON that would take far more memory or stack than its bytes (payload.ts): a line, an
 * element of a multi-line array or a whole object nested deeper than MAX_SCAN_DEPTH levels
 * is not parsed but reported (`*-too-complex`, with where it was) and skipped, and the
 * rest of the object is still read; a whole object read as one parsed event is limited as
 * a line is. The same on the main thread (as event objects and as JSON lines) and on a
 * read thread.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** `data` read as `a.json` (with an object after it, so that a read thread takes it): its events and problems. */
async function read(data: string, fields: Record<string, unknown>, where: RunOptions) {
  const prefix = `${randomUUID()}/`;
  const object = `${prefix}a.json`;
  await env.put(object, data);
  await env.put(`${prefix}z.json`, '{"filler":1}\n');
  pool.readNames = [];
  const { events, reports, ended } = await env.run(
    { 'object-names': [prefix], 'object-name-field': 'object', ...fields },
    where,
  );
  if (where.readPool) expect(pool.readNames).toContain(object);
  expect(events.filter((e) => e.object !== object)).toHaveLength(1);
  return {
    events: events.filter((e) => e.object === object).map(({ object: _, ...rest }: RunEvent) => rest),
    problems: reports
      .filter((r) => r.type === 'job-errors')
      .map(({ payload: { input: _i, bucket: _b, object: name, ...rest } }) => ({ name, ...rest }))
      .map(({ name, ...rest }) => (name === object ? rest : { name, ...rest })),
    ended,
  };
}

const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const deepObject = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;

describe.each(WAYS)('JSON nested too deep (%s)', (_, where) => {
  it.each(['auto', 'json'])(
    '%s: a line nested deeper than 256 levels is reported with its line number and skipped; the lines after it are read',
    async (mode) => {
      const fine = `{"ok":${deepArray(255)}}`; // 256 levels: read
      const data = [
        '{"before":0}',
        deepArray(257),
        `{"x":${deepObject(300)}}`,
        fine,
        `[{"n":1},${deepArray(300)}]`,
        '{"after":1}',
      ].join('\n');
      const { events, problems } = await read(data, { 'payload-mode': mode }, where);
      expect(events).toEqual([{ before: 0 }, JSON.parse(fine), { after: 1 }]);
      expect(problems).toEqual([
        { reason: 'line-too-complex', line: 2, depth_limit: 256 },
        { reason: 'line-too-complex', line: 3, depth_limit: 256 },
        { reason: 'line-too-complex', line: 5, depth_limit: 256 },
      ]);
    },
  );

  it('a line too deep for the stack fails that line only, not the object', async () => {
    const data = `{"before":0}\n\n${deepArray(100_000)}\n{"after":1}\n`;
    const { events, problems, ended } = await read(data, { 'payload-mode': 'auto' }, where);
    expect(events).toEqual([{ before: 0 }, { after: 1 }]);
    expect(problems).toEqual([{ reason: 'line-too-complex', line: 3, depth_limit: 256 }]);
    expect(ended).toMatchObject({ failed_objects: 0 });
  });

  it.each(['auto', 'json'])(
    '%s: an element of a multi-line array nested too deep is reported and skipped',
    async (mode) => {
      const data = `[\n  {"n":1},\n  ${deepArray(300)},\n  {"x":${deepObject(100_000)}},\n  {"n":4}\n]\n`;
      const { events, problems, ended } = await read(data, { 'payload-mode': mode }, where);
      expect(events).toEqual([{ n: 1 }, { n: 4 }]);
      expect(problems).toEqual([
        { reason: 'element-too-complex', element: 2, depth_limit: 256 },
        { reason: 'element-too-complex', element: 3, depth_limit: 256 },
      ]);
      expect(ended).toMatchObject({ failed_objects: 0 });
    },
  );

  it.each(['auto', 'json'])(
    '%s with ignore-linebreaks: a whole object nested too deep is reported, not parsed',
    async (mode) => {
      for (const levels of [300, 100_000]) {
        const { events, problems, ended } = await read(
          deepArray(levels),
          { 'payload-mode': mode, 'ignore-linebreaks': true },
          where,
        );
        expect(events).toEqual([]);
        expect(problems).toEqual([{ reason: 'object-too-complex', depth_limit: 256 }]);
        expect(ended).toMatchObject({ failed_objects: 0 });
      }
    },
  );
});

describe.each(WAYS)('a whole object read as one event (%s)', (_, where) => {
  const limited = { ...where, maxLineBytes: 1000 };
  const json = JSON.stringify(Array.from({ length: 200 }, (_, n) => ({ n })));

  it('parsed (json, auto), it is limited as a line is', async () => {
    for (const mode of ['json', 'auto']) {
      const { events, problems } = await read(
        json,
        { 'payload-mode': mode, 'ignore-linebreaks': true },
        limited,
      );
      expect(events, mode).toEqual([]);
      expect(problems, mode).toEqual([{ reason: 'object-too-large', limit_bytes: 1000 }]);
    }
  });

  it('not parsed (raw, or auto and not JSON), it is read up to the object limit', async () => {
    const text = 'plain text, '.repeat(200);
    for (const [mode, data] of [
      ['raw', json],
      ['auto', text],
    ]) {
      const { events, problems } = await read(
        data!,
        { 'payload-mode': mode, 'ignore-linebreaks': true },
        limited,
      );
      expect(events, mode).toEqual([{ _raw: data }]);
      expect(problems, mode).toEqual([]);
    }
  });
});
