/**
 * Parquet objects that would take far more memory to decode than their size suggests, odd
 * files, and values JSON would change. A row group whose footer says it decodes to more
 * than MAX_ROW_GROUP_BYTES is refused before it is decoded (`row-group-too-large`), on the
 * main thread and on the read threads; the other objects carry on. A few KB of parquet
 * can hold a GB of rows: DuckDB writes a repeated string as a dictionary of one entry.
 */
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool } from '../../functions/runner/cores/read-pool.ts';
import { bufferReader, parquetRows } from '../../functions/runner/inputs/gcs/parquet.ts';
import { nodeParquetModules } from '../../functions/runner/inputs/gcs/parquet-node.ts';
import { type GcsTestEnv, gcsTestEnv } from './helpers.ts';
import { writeParquet } from './parquet-fixture.ts';

let env: GcsTestEnv;
const pool = new ReadPool(2);
let good: Buffer;

beforeAll(async () => {
  env = await gcsTestEnv();
  good = await writeParquet("SELECT i AS id, 'row-' || i AS label FROM range(3000) t(i)", 1000);
  // 300,000 rows of 1000 bytes: 300 MB of rows in about 1.3 KB (one dictionary entry).
  const strings = await writeParquet("SELECT repeat('x', 1000) AS s FROM range(300000)", 100_000_000, 'zstd');
  expect(strings.length).toBeLessThan(4096);
  // 40 million nulls: a few hundred bytes, 320 MB as Arrow's 64-bit values.
  const nulls = await writeParquet('SELECT NULL::BIGINT AS n FROM range(40000000)', 100_000_000, 'zstd');
  expect(nulls.length).toBeLessThan(4096);
  await env.put('bomb/good.parquet', good);
  await env.put('bomb/strings.parquet', strings);
  await env.put('nulls/nulls.parquet', nulls);
  await env.put('odd/empty.parquet', Buffer.alloc(0));
  await env.put('odd/magic-only.parquet', Buffer.from('PAR1PAR1'));
  await env.put('odd/len-huge.parquet', footerLength(good, 0x7fffffff));
  await env.put('odd/len-all.parquet', footerLength(good, good.length - 8));
  await env.put('odd/no-columns.parquet', rowGroupWithoutColumns(good));
});
afterAll(async () => {
  await pool.close();
  await env.stop();
});

const where = [
  ['on the main thread', { readPool: null }],
  ['on the read threads', { readPool: pool, asJsonLines: true }],
] as const;

describe('a row group too large to decode', () => {
  it.each(where)(
    '%s: refused from its footer, before decoding; the other objects carry on',
    async (_, options) => {
      const started = Date.now();
      const { events, reports, ended } = await env.run(
        { 'object-names': ['bomb/'], preprocessors: ['extension'], 'object-name-field': 'object' },
        { ...options, concurrency: 2 },
      );
      const errors = reports.filter((r) => r.type === 'job-errors').map((r) => r.payload);
      expect(errors).toEqual([
        expect.objectContaining({
          object: 'bomb/strings.parquet',
          reason: expect.stringMatching(
            /^row-group-too-large: row group 0 of 1 \(300000 rows, .*\) would decode to about 30\d,\d{3},\d{3} bytes; the limit is 268,435,456 bytes .*write the file with smaller row groups/,
          ),
          transient: false,
        }),
      ]);
      expect(ended).toMatchObject({ failed_objects: 1 });
      expect(events.filter((e) => e.object === 'bomb/good.parquet')).toHaveLength(3000);
      expect(events.filter((e) => e.object === 'bomb/strings.parquet')).toHaveLength(0);
      // Decoding 300 MB of rows (and delivering them) takes far longer than refusing them.
      expect(Date.now() - started).toBeLessThan(5000);
    },
  );

  it.each(where)('%s: 40 million nulls are 320 MB as Arrow values', async (_, options) => {
    const { reports } = await env.run({ 'object-names': ['nulls/'], preprocessors: ['extension'] }, options);
    const errors = reports.filter((r) => r.type === 'job-errors').map((r) => r.payload.reason);
    expect(errors).toEqual([expect.stringMatching(/^row-group-too-large: row group 0 .*\(40000000 rows/)]);
  });
});

describe('files that are not parquet, or whose footer is damaged', () => {
  it.each(where)('%s: reported as such, not as the libraries word it', async (_, options) => {
    const { reports } = await env.run({ 'object-names': ['odd/'], preprocessors: ['extension'] }, options);
    const reasons = Object.fromEntries(
      reports.filter((r) => r.type === 'job-errors').map((r) => [r.payload.object, r.payload.reason]),
    );
    expect(reasons).toEqual({
      'odd/empty.parquet': 'not a parquet file (0 bytes)',
      'odd/magic-only.parquet': expect.stringMatching(/^invalid parquet footer: /),
      'odd/len-huge.parquet': expect.stringMatching(/^invalid parquet footer: /),
      'odd/len-all.parquet': expect.stringMatching(/^invalid parquet footer: /),
      'odd/no-columns.parquet': expect.stringMatching(/^invalid parquet footer: /),
    });
  });
});

describe('values JSON would change', () => {
  it('decimals beyond a double become decimal strings; times are text; intervals ISO 8601 durations', async () => {
    const bytes = await writeParquet(`SELECT * FROM (VALUES
      (12345678901234567890.12345678::DECIMAL(38,8), 1.5::DECIMAL(38,8), -0.00000001::DECIMAL(38,8),
       123456789012345678::DECIMAL(18,0), -1234567890123.45::DECIMAL(18,2), 9007199254740993::DECIMAL(20,0),
       TIME '12:34:56.789', TIME '00:00:00', INTERVAL 3 DAY, INTERVAL '1 month 2 days 3.5 seconds',
       INTERVAL 0 DAY)
    ) t(big, small, tiny, wide18, neg15, beyond, t, midnight, days, mixed, zero)`);
    const rows: Record<string, unknown>[] = [];
    for await (const slice of parquetRows(bufferReader(bytes), nodeParquetModules))
      rows.push(...slice.rows());
    expect(rows).toEqual([
      {
        big: '12345678901234567890.12345678',
        small: 1.5,
        tiny: -0.00000001,
        wide18: '123456789012345678',
        neg15: -1234567890123.45,
        beyond: '9007199254740993',
        t: '12:34:56.789',
        midnight: '00:00:00.000',
        days: 'P3D',
        // parquet-wasm (arrow-rs) reads a parquet INTERVAL as days and milliseconds: the
        // month is gone before arrow-rows sees it (documented in docs/inputs/gcs.md).
        mixed: 'P2DT3.5S',
        zero: 'PT0S',
      },
    ]);
  });
});

/** `bytes` with the footer length (the 4 bytes before the closing magic) set to `length`. */
function footerLength(bytes: Buffer, length: number): Buffer {
  const out = Buffer.from(bytes);
  out.writeUInt32LE(length, out.length - 8);
  return out;
}

/**
 * `bytes` with the footer's first row group's column list (thrift field 1, a list of
 * structs) turned into a list of i32s: hyparquet used to fail with `rowGroup.field_1.map`.
 */
function rowGroupWithoutColumns(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  const length = out.readUInt32LE(out.length - 8);
  const start = out.length - 8 - length;
  const meta = parquetMetadata(out.buffer.slice(out.byteOffset, out.byteOffset + out.length) as ArrayBuffer);
  expect(meta.row_groups.length).toBeGreaterThan(0);
  // The row group list is field 4 of FileMetaData: a list header (0x19 + count/type byte);
  // every row group then starts with its column list (0x19, size << 4 | 12 for structs).
  const count = meta.row_groups[0]!.columns.length;
  const at = out.indexOf(Buffer.from([0x19, (count << 4) | 12]), start);
  expect(at).toBeGreaterThan(start);
  out[at + 1] = (count << 4) | 5; // i32s instead of structs
  return out;
}
