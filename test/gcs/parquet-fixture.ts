/**
 * Writes parquet files with DuckDB (tests and the benchmark need real parquet; hyparquet only reads).
 *
 * @example
 *   const bytes = await writeParquet('SELECT i AS id, i * 2 AS double FROM range(10) t(i)');
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `compression`: DuckDB's codec name (snappy by default, zstd, gzip, uncompressed, ...). */
export async function writeParquet(
  select: string,
  rowGroupSize = 100_000,
  compression = 'snappy',
): Promise<Buffer> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const dir = await mkdtemp(join(tmpdir(), 'sluice-parquet-'));
  const path = join(dir, 'data.parquet');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (${select}) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE ${rowGroupSize}, COMPRESSION ${compression})`,
    );
    return await readFile(path);
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}
