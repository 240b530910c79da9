/**
 * Parquet objects as JSON rows, one row group at a time (`hyparquet`), so memory holds
 * one row group's rows, not the file. The file is read through an `AsyncBuffer`: range
 * requests straight from Cloud Storage with read-ahead, or an in-memory buffer when an
 * earlier preprocessor (gzip) produced the bytes. Values JSON cannot hold are converted:
 * 64-bit integers to numbers (strings beyond 2^53), dates to RFC 3339, bytes to base64.
 *
 * @example
 *   for await (const rows of parquetRows(rangeReader(size, read))) deliver(rows);
 */
import type { AsyncBuffer } from 'hyparquet';

/** Smallest range request when reading parquet from storage: few requests per row group. */
export const READ_AHEAD_BYTES = 8 * 1024 * 1024;

export async function* parquetRows(file: AsyncBuffer): AsyncGenerator<Record<string, unknown>[]> {
  const { parquetMetadataAsync, parquetReadObjects } = await import('hyparquet');
  const metadata = await parquetMetadataAsync(file);
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd });
    for (const row of rows) toJsonRow(row);
    yield rows;
    rowStart = rowEnd;
  }
}

/** An AsyncBuffer over `read(start, endInclusive)` that fetches at least READ_AHEAD_BYTES at a time. */
export function rangeReader(
  byteLength: number,
  read: (start: number, end: number) => Promise<Buffer>,
): AsyncBuffer {
  let block: { start: number; bytes: Buffer } | undefined;
  return {
    byteLength,
    async slice(start: number, end = byteLength) {
      if (!block || start < block.start || end > block.start + block.bytes.length) {
        const until = Math.min(byteLength, Math.max(end, start + READ_AHEAD_BYTES));
        block = { start, bytes: await read(start, until - 1) };
      }
      const from = start - block.start;
      return toArrayBuffer(block.bytes.subarray(from, from + (end - start)));
    },
  };
}

export function bufferReader(bytes: Buffer): AsyncBuffer {
  return { byteLength: bytes.length, slice: (start, end) => toArrayBuffer(bytes.subarray(start, end)) };
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
}

function toJsonRow(row: Record<string, unknown>): void {
  for (const key in row) {
    const value = row[key];
    if (value !== null && (typeof value === 'object' || typeof value === 'bigint'))
      row[key] = toJsonValue(value);
  }
}

function toJsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v);
    return out;
  }
  return value;
}
