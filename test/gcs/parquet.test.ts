/**
 * Parquet to JSON rows (`parquet.ts` + `arrow-rows.ts`) on real files written by DuckDB:
 * every codec, values JSON cannot hold, nulls, nested types, and DuckDB's own JSON of
 * the same file as the reference. The path through the Cloud Storage emulator (range
 * reads, `.parquet.gz`) is proven in gcs-input.test.ts.
 */
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bufferReader, parquetRows, ROWS_PER_SLICE } from '../../functions/runner/inputs/gcs/parquet.ts';
import { nodeParquetModules } from '../../functions/runner/inputs/gcs/parquet-node.ts';
import { writeParquet } from './parquet-fixture.ts';

async function rowsOf(bytes: Buffer): Promise<{ rows: Record<string, unknown>[]; slices: number[] }> {
  const rows: Record<string, unknown>[] = [];
  const slices: number[] = [];
  for await (const slice of parquetRows(bufferReader(bytes), nodeParquetModules)) {
    slices.push(slice.count);
    rows.push(...slice.rows());
  }
  return { rows, slices };
}

describe('parquet to JSON rows', () => {
  it.each(['snappy', 'zstd', 'gzip', 'uncompressed'])(
    '%s: every row, in order, one row group at a time in slices of at most ROWS_PER_SLICE',
    async (codec) => {
      const bytes = await writeParquet(
        "SELECT i AS id, 'r' || i AS label, i % 3 = 0 AS flag, i / 4 AS q FROM range(10000) t(i)",
        6144,
        codec,
      );
      const { rows, slices } = await rowsOf(bytes);
      expect(rows).toHaveLength(10000);
      expect(rows[0]).toEqual({ id: 0, label: 'r0', flag: true, q: 0 });
      expect(rows[9999]).toEqual({ id: 9999, label: 'r9999', flag: true, q: 2499.75 });
      expect(rows.every((row, i) => row.id === i)).toBe(true);
      // Two row groups (6144 + 3856 rows), each cut into slices.
      expect(slices).toEqual([...cut(6144), ...cut(3856)]);
    },
  );

  it('converts what JSON cannot hold: int64 beyond 2^53, decimals, dates, timestamps, bytes, UUIDs', async () => {
    const bytes = await writeParquet(`SELECT * FROM (VALUES
      (9007199254740991::BIGINT, 9007199254740992::BIGINT, -9007199254740993::BIGINT,
       18446744073709551615::UBIGINT, 12.345::DECIMAL(18,3), -0.1::DECIMAL(4,1),
       -123456789012345678901.5::DECIMAL(38,1), DATE '2024-02-29',
       TIMESTAMP '2024-02-29 12:34:56.789012', TIMESTAMPTZ '2024-02-29 12:34:56.789+02',
       TIMESTAMP_NS '2024-02-29 12:34:56.789123456', '\\x00\\xFF'::BLOB,
       uuid '12345678-9abc-def0-1234-56789abcdef0', 5::TINYINT, 4000000000::UINTEGER, 1.5::FLOAT)
    ) t(safe, beyond, below, ubig, dec, neg, wide, d, ts, tstz, ns, bin, u, tiny, uint, f)`);
    const { rows } = await rowsOf(bytes);
    expect(rows).toEqual([
      {
        safe: 9007199254740991,
        beyond: '9007199254740992',
        below: '-9007199254740993',
        ubig: '18446744073709551615',
        dec: 12.345,
        neg: -0.1,
        // More digits than a double keeps: the exact decimal as text (as int64 beyond 2^53).
        wide: '-123456789012345678901.5',
        d: '2024-02-29T00:00:00.000Z',
        ts: '2024-02-29T12:34:56.789Z',
        tstz: '2024-02-29T10:34:56.789Z',
        ns: '2024-02-29T12:34:56.789Z',
        bin: Buffer.from([0, 255]).toString('base64'),
        u: '12345678-9abc-def0-1234-56789abcdef0',
        tiny: 5,
        uint: 4000000000,
        f: 1.5,
      },
    ]);
  });

  it('nulls in every kind of column, and inside lists', async () => {
    const bytes = await writeParquet(`SELECT * FROM (VALUES
      (1, 1::BIGINT, 'a', true, 1.5::DOUBLE, 1.5::DECIMAL(10,2), DATE '2024-01-01', '\\x01'::BLOB, [1, NULL, 3], {'a': 1}),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      (3, 3::BIGINT, NULL, false, NULL, 2::DECIMAL(10,2), NULL, NULL, [NULL], {'a': NULL})
    ) t(id, n, s, b, x, dec, d, bin, list, st)`);
    const { rows } = await rowsOf(bytes);
    expect(rows).toEqual([
      {
        id: 1,
        n: 1,
        s: 'a',
        b: true,
        x: 1.5,
        dec: 1.5,
        d: '2024-01-01T00:00:00.000Z',
        bin: 'AQ==',
        list: [1, null, 3],
        st: { a: 1 },
      },
      { id: 2, n: null, s: null, b: null, x: null, dec: null, d: null, bin: null, list: null, st: null },
      { id: 3, n: 3, s: null, b: false, x: null, dec: 2, d: null, bin: null, list: [null], st: { a: null } },
    ]);
  });

  it('nested columns: lists, structs, maps, lists of structs, structs of lists', async () => {
    const bytes = await writeParquet(`SELECT * FROM (VALUES
      ([1, 2], {'a': 1, 'b': 'x'}, MAP {'k1': 1, 'k2': 2}, [{'x': 1}, {'x': 2}], {'l': ['p', 'q']}, [[1], [], [2, 3]]),
      ([], {'a': 2, 'b': NULL}, MAP {}, [], {'l': []}, [])
    ) t(list, st, m, los, sol, lol)`);
    const { rows } = await rowsOf(bytes);
    expect(rows).toEqual([
      {
        list: [1, 2],
        st: { a: 1, b: 'x' },
        m: { k1: 1, k2: 2 },
        los: [{ x: 1 }, { x: 2 }],
        sol: { l: ['p', 'q'] },
        lol: [[1], [], [2, 3]],
      },
      { list: [], st: { a: 2, b: null }, m: {}, los: [], sol: { l: [] }, lol: [] },
    ]);
  });

  it('strings: ASCII and non-ASCII columns, dictionary-encoded ones, JSON columns parsed', async () => {
    const bytes =
      await writeParquet(`SELECT 'name-' || i AS ascii, 'héllo ✓ ' || i AS utf8, 'k' || (i % 3) AS dict,
      CASE WHEN i < 2 THEN ('{"n":' || i || '}') END::JSON AS doc FROM range(3) t(i)`);
    const { rows } = await rowsOf(bytes);
    expect(rows).toEqual([
      { ascii: 'name-0', utf8: 'héllo ✓ 0', dict: 'k0', doc: { n: 0 } },
      { ascii: 'name-1', utf8: 'héllo ✓ 1', dict: 'k1', doc: { n: 1 } },
      { ascii: 'name-2', utf8: 'héllo ✓ 2', dict: 'k2', doc: null },
    ]);
  });

  it('geometry columns (WKB) become GeoJSON', async () => {
    const bytes = await writeParquet(
      "SELECT * FROM (VALUES ('POINT(1 2)'::GEOMETRY), ('LINESTRING(0 0, 1 1)'::GEOMETRY), (NULL)) t(g)",
    );
    const { rows } = await rowsOf(bytes);
    expect(rows).toEqual([
      { g: { type: 'Point', coordinates: [1, 2] } },
      {
        g: {
          type: 'LineString',
          coordinates: [
            [0, 0],
            [1, 1],
          ],
        },
      },
      { g: null },
    ]);
  });

  it('a column named __proto__ is an ordinary field, not the prototype', async () => {
    const bytes = await writeParquet(`SELECT 1 AS "__proto__", 2 AS other`);
    const { rows } = await rowsOf(bytes);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(Object.keys(rows[0]!)).toEqual(['__proto__', 'other']);
    expect(JSON.stringify(rows[0])).toBe('{"__proto__":1,"other":2}');
  });

  it('a file without rows gives no rows; bytes that are not parquet fail (the input reports the object)', async () => {
    expect((await rowsOf(await writeParquet('SELECT 1 AS a WHERE false'))).rows).toEqual([]);
    await expect(rowsOf(Buffer.from('PAR1 this is not a parquet file PAR1'))).rejects.toThrow();
    await expect(rowsOf(Buffer.alloc(0))).rejects.toThrow();
  });

  it('a damaged row group after good ones fails the read (rows before it were delivered), with no unhandled rejection', async () => {
    const bytes = await writeParquet("SELECT i AS id, 'r' || i AS label FROM range(8192) t(i)", 4096);
    const { parquetMetadata } = await import('hyparquet');
    const second = parquetMetadata(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer,
    ).row_groups[1]!;
    const at = Number(second.columns[0]!.meta_data!.data_page_offset);
    bytes.fill(0xff, at, at + 64);
    let rows = 0;
    await expect(
      (async () => {
        for await (const slice of parquetRows(bufferReader(bytes), nodeParquetModules)) {
          rows += slice.count;
          await new Promise((resolve) => setTimeout(resolve, 5)); // a slow output
        }
      })(),
    ).rejects.toThrow();
    expect(rows).toBe(4096);
  });

  it('gives the same JSON as DuckDB for the benchmark shape (doubles, decimals, strings, booleans)', async () => {
    const select = `SELECT i AS id, i * 2 AS a, i % 1000 AS b, i * 1.5 AS c, 'name-' || i AS d, i % 7 = 0 AS e,
      (i * 31) % 100000 AS f, 'k' || (i % 100) AS g, i::DOUBLE / 3 AS h, i + 17 AS j FROM range(5000) t(i)`;
    const bytes = await writeParquet(select, 2000);
    const { rows } = await rowsOf(bytes);
    const expected = await duckdbJson(select);
    expect(rows.map((row) => JSON.stringify(row))).toEqual(expected.map((row) => JSON.stringify(row)));
  });
});

/** Slice lengths of a row group of `rows` rows. */
function cut(rows: number): number[] {
  const slices: number[] = [];
  for (let start = 0; start < rows; start += ROWS_PER_SLICE)
    slices.push(Math.min(ROWS_PER_SLICE, rows - start));
  return slices;
}

/** DuckDB's own JSON rows for a query, parsed. */
async function duckdbJson(select: string): Promise<unknown[]> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const path = join(tmpdir(), `sluice-duckdb-json-${process.pid}-${Date.now()}.json`);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (${select}) TO '${path}' (FORMAT json)`);
    const text = await readFile(path, 'utf8');
    return text
      .split('\n')
      .filter((line) => line)
      .map((line) => JSON.parse(line));
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(path, { force: true });
  }
}
