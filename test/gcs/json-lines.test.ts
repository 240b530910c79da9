/**
 * A gcs → print job takes its events as JSON lines: NDJSON lines stay bytes, checked and
 * copied with the metadata spliced in. Whatever the content, that must give exactly the
 * events (and counts, and reported problems) of the event-object path every other output
 * takes. Real emulator, real objects, both paths side by side.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GcsTestEnv, gcsTestEnv, type RunResult } from './helpers.ts';
import { writeParquet } from './parquet-fixture.ts';

let env: GcsTestEnv;

beforeAll(async () => {
  env = await gcsTestEnv('json-lines');
  const mixed = [
    '{"n":1,"msg":"plain"}',
    '  {"n":2 , "nested": {"object": "not top-level", "a": [1, {"b": null}]}}  ',
    '{"n":3,"object":"a data key named like the metadata field"}',
    '{"n":4,"obj\\u0065ct":"the same key, escaped"}',
    '{"n":5,"text":"é € 😀 \\u2028 \\"quoted\\" \\\\ back"}',
    '{}',
    '{ }',
    '[1, {"in":"array"}, "x"]',
    'not json at all',
    '{"broken": tru}',
    '{"n": 01}',
    '"a string"',
    '42',
    '',
    '   ',
    '{"n":6}\r',
    `{"deep":${'['.repeat(300)}${']'.repeat(300)}}`,
  ].join('\n');
  await env.put('mixed.json', `${mixed}\n{"last":"no line break"}`);
  await env.put('mixed.json.gz', gzipSync(mixed));
  // Bytes that are not UTF-8 inside a JSON string: decoded (U+FFFD) the slow way, on both paths.
  await env.put(
    'latin1.json',
    Buffer.concat([Buffer.from('{"n":7,"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n{"n":8}\n')]),
  );
  await env.put('array.json', '[\n  {"n": 9},\n  {"n": 10}\n]\n');
  await env.put('rows.parquet', await writeParquet("SELECT 11 AS n, 'row' AS s"));
});
afterAll(async () => {
  await env.stop();
});

async function both(fields: Record<string, unknown>): Promise<[RunResult, RunResult]> {
  const asObjects = await env.run(fields);
  const asLines = await env.run(fields, { asJsonLines: true });
  return [asObjects, asLines];
}

const sorted = (result: RunResult) =>
  result.events.map((event) => JSON.stringify(event)).sort((a, b) => a.localeCompare(b));
const problems = (result: RunResult) =>
  result.reports
    .filter((report) => report.type === 'job-errors')
    .map((report) => JSON.stringify(report.payload))
    .sort();

describe('events as JSON lines are the events as objects', () => {
  it.each([
    [
      'payload-mode auto, every metadata field',
      { 'object-name-field': 'object', 'content-length-field': 'size', 'etag-field': 'etag' },
    ],
    ['payload-mode json', { 'payload-mode': 'json', 'object-name-field': 'object' }],
    ['payload-mode raw', { 'payload-mode': 'raw', 'object-name-field': 'object' }],
    ['no metadata fields', {}],
    ['data-field', { 'data-field': 'data', 'object-name-field': 'object' }],
    ['list-objects', { mode: 'list-objects', 'object-name-field': 'object' }],
  ])('%s', async (_, fields) => {
    const [asObjects, asLines] = await both({ preprocessors: ['extension'], ...fields });
    expect(asObjects.events.length).toBeGreaterThan(4);
    expect(sorted(asLines)).toEqual(sorted(asObjects));
    expect(asLines.ended.events).toBe(asObjects.ended.events);
    expect(problems(asLines)).toEqual(problems(asObjects));
  });

  it('the line order within an object is kept; JSON object lines are handed on as written', async () => {
    const [asObjects, asLines] = await both({ 'object-names': ['mixed.json'], mode: 'download-objects' });
    expect(asLines.events).toEqual(asObjects.events);
    // Spacing kept: the line went on as its bytes, not parsed and serialized again.
    expect(asLines.jsonText).toContain('\n  {"n":2 , "nested": {"object": "not top-level"');
  });

  it('a top-level key named like a metadata field never appears twice: the metadata wins', async () => {
    const { events } = await env.run(
      { 'object-names': ['mixed.json'], mode: 'download-objects', 'object-name-field': 'object' },
      { asJsonLines: true },
    );
    const three = events.find((event) => event.n === 3);
    expect(three?.object).toBe('mixed.json');
  });
});
