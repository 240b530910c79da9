/**
 * Where the parts of a parquet file lie, read from its footer, so that a read thread can
 * decode one row group from only the bytes it needs: the footer and that row group's
 * column chunks. The main thread fetches each row group's bytes with one range request
 * and hands them over with the task (runner/cores/parquet-groups.ts); the thread reads
 * them through `sparseSource`, which asks for anything else (a writer that lays its
 * chunks out differently) with `fallback`.
 *
 * parquet-wasm itself reads a file the same way: the last 8 bytes, the footer, then one
 * range per row group spanning its column chunks (arrow-rs's `ColumnChunkMetaData::byte_range`).
 *
 * Also the limits on a row group (parquet-wasm decodes a whole row group into memory at
 * once): `rowGroupSize` estimates from the footer what it decodes to, `withDictionaries`
 * adds what its dictionary pages expand to (a string repeated a million times is one
 * dictionary entry: a file of 1.3 KB held 1 GB of rows), and `checkRowGroup` refuses one
 * beyond MAX_ROW_GROUP_BYTES (`row-group-too-large`) before it is decoded. A damaged
 * footer is reported as `invalid parquet footer: ...` (`readFooter`).
 *
 * @example
 *   const layout = await parquetLayout(rangeReader(size, read));
 *   const group = await read(layout.groups[0].start, layout.groups[0].end - 1);
 */
import type { FileMetaData, RowGroup, SchemaElement } from 'hyparquet';
import type { ByteSource } from './parquet.ts';

/**
 * Most bytes a row group may decode to (estimated from its footer and dictionary page
 * headers, `rowGroupSize`). parquet-wasm holds a whole row group as Arrow, then as an IPC
 * copy, and converting it takes about as much again: a 1 GB row group took 3.2 GB of
 * memory, and a runner's 1 GiB is shared by its runs. Writers' usual row groups are far
 * below (DuckDB: 122,880 rows; Spark: 128 MB compressed, typically less decoded).
 */
export const MAX_ROW_GROUP_BYTES = 256 * 1024 * 1024;
/** Most bytes of a row group's column chunks (as stored: fetched with one range request). */
export const MAX_ROW_GROUP_COMPRESSED_BYTES = 256 * 1024 * 1024;

/** A row group's size by its footer (and its dictionary page headers, once `withDictionaries` read them). */
export interface RowGroupSize {
  rows: number;
  /** Its column chunks as stored. */
  compressed: number;
  /** Its column chunks uncompressed (the footer's `total_byte_size`, or the chunks' sum if larger). */
  uncompressed: number;
  /** About what it decodes to as Arrow: at least `uncompressed`, see `rowGroupSize`. */
  decoded: number;
}

/** A row group refused: `row-group-too-large` (the job-errors reason starts with the code). */
export class RowGroupTooLarge extends Error {
  readonly code = 'row-group-too-large';
}

export interface ParquetLayout {
  byteLength: number;
  schema: SchemaElement[];
  /** The footer and what follows it: the file's last `metadata_length + 8` bytes. */
  tail: { start: number; bytes: Uint8Array };
  /** Each row group's bytes: from its first column chunk to the end of its last; its size by its footer. */
  groups: { start: number; end: number; size: RowGroupSize; row: RowGroup }[];
}

export async function parquetLayout(file: ByteSource): Promise<ParquetLayout> {
  const metadata = await readFooter(file);
  const tailStart = file.byteLength - metadata.metadata_length - 8;
  const tail = new Uint8Array(await file.slice(tailStart, file.byteLength));
  const groups = footerFigures(() =>
    metadata.row_groups.map((row) => ({ ...rowGroupSpan(row, tailStart), size: rowGroupSize(row), row })),
  );
  return {
    byteLength: file.byteLength,
    schema: metadata.schema,
    tail: { start: tailStart, bytes: tail },
    groups,
  };
}

/** The file's footer (hyparquet): a damaged one is `invalid parquet footer: ...`, an empty file not parquet. */
export async function readFooter(file: ByteSource): Promise<FileMetaData> {
  if (file.byteLength === 0) throw new Error('not a parquet file (0 bytes)');
  const { parquetMetadataAsync } = await import('hyparquet');
  // A failed read (storage) is reported as itself, with its status, not as a damaged footer.
  let readFailure: { err: unknown } | undefined;
  const watched: ByteSource = {
    byteLength: file.byteLength,
    async slice(start, end) {
      try {
        return await file.slice(start, end);
      } catch (err) {
        readFailure ??= { err };
        throw err;
      }
    },
  };
  try {
    const metadata = await parquetMetadataAsync(watched);
    footerFigures(() => {
      for (const row of metadata.row_groups) rowGroupSize(row);
    });
    return metadata;
  } catch (err) {
    if (readFailure) throw readFailure.err;
    throw footerError(err);
  }
}

/** `err` (from reading a footer) as `invalid parquet footer: <what the library said>`. */
export function footerError(err: unknown): Error {
  if (err instanceof Error && /^(invalid parquet footer|not a parquet file)/.test(err.message)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new Error(`invalid parquet footer: ${message}`, { cause: err });
}

/** `compute()`, its TypeErrors (a footer whose fields are not what they should be) as a damaged footer. */
function footerFigures<T>(compute: () => T): T {
  try {
    return compute();
  } catch (err) {
    throw footerError(err);
  }
}

function rowGroupSpan(group: RowGroup, tailStart: number): { start: number; end: number } {
  let start = Number.POSITIVE_INFINITY;
  let end = 0;
  for (const column of group.columns) {
    const meta = column.meta_data;
    if (!meta) continue;
    const first = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
    start = Math.min(start, first);
    end = Math.max(end, first + Number(meta.total_compressed_size));
  }
  // No column data (or offsets beyond the file): nothing prefetched, the thread asks.
  return start < end && end <= tailStart ? { start, end } : { start: 0, end: 0 };
}

/** Bytes a value takes in Arrow, by parquet's physical type (BYTE_ARRAY: its offset; INT96 becomes a timestamp). */
const VALUE_BYTES: Record<string, number> = {
  BOOLEAN: 1 / 8,
  INT32: 4,
  FLOAT: 4,
  INT64: 8,
  DOUBLE: 8,
  INT96: 8,
  BYTE_ARRAY: 4,
};

/**
 * A row group's size by its footer. What it decodes to is estimated per column chunk as
 * the larger of its uncompressed size and its values' Arrow size (values × width: a column
 * of nulls or of a repeated value is a few bytes stored, 8 bytes a value decoded). Strings
 * from a dictionary are added by `withDictionaries`.
 */
export function rowGroupSize(group: RowGroup): RowGroupSize {
  let compressed = 0;
  let uncompressed = 0;
  let decoded = 0;
  for (const column of group.columns) {
    const meta = column.meta_data;
    if (!meta) continue;
    const chunkUncompressed = Number(meta.total_uncompressed_size);
    compressed += Number(meta.total_compressed_size);
    uncompressed += chunkUncompressed;
    const width = meta.type === 'FIXED_LEN_BYTE_ARRAY' ? 16 : (VALUE_BYTES[meta.type] ?? 8);
    decoded += Math.max(chunkUncompressed, Number(meta.num_values) * width);
  }
  uncompressed = Math.max(uncompressed, Number(group.total_byte_size));
  compressed = Math.max(compressed, Number(group.total_compressed_size ?? 0));
  return { rows: Number(group.num_rows), compressed, uncompressed, decoded: Math.max(decoded, uncompressed) };
}

/** Whether `withDictionaries` has anything to read in this row group (strings from a dictionary). */
export function hasStringDictionaries(group: RowGroup): boolean {
  return group.columns.some((column) => dictionaryOffset(column.meta_data) !== undefined);
}

/**
 * `size` with what each dictionary-encoded string column expands to: its values × the
 * dictionary's average entry (from the dictionary page's header, in `region`, the row
 * group's bytes). An average, not a bound: a footer and headers can lie, which decoding
 * guards against (parquet.ts).
 */
export async function withDictionaries(
  group: RowGroup,
  size: RowGroupSize,
  region: { start: number; bytes: Uint8Array },
): Promise<RowGroupSize> {
  if (!hasStringDictionaries(group)) return size;
  const { parquetHeader } = await import('hyparquet/src/column.js');
  const view = new DataView(region.bytes.buffer, region.bytes.byteOffset, region.bytes.byteLength);
  let decoded = size.decoded;
  for (const column of group.columns) {
    const meta = column.meta_data;
    const offset = dictionaryOffset(meta);
    if (!meta || offset === undefined) continue;
    const at = offset - region.start;
    if (at < 0 || at >= region.bytes.length) continue;
    try {
      const header = parquetHeader({ view, offset: at });
      const entries = header.dictionary_page_header?.num_values ?? 0;
      if (header.type !== 'DICTIONARY_PAGE' || entries <= 0) continue;
      const average = Math.max(0, header.uncompressed_page_size - 4 * entries) / entries;
      const values = Number(meta.num_values);
      const chunk = Math.max(Number(meta.total_uncompressed_size), values * 4);
      decoded += Math.max(0, values * (4 + average) - chunk);
    } catch {
      // A damaged page header: decoding it reports it.
    }
  }
  return { ...size, decoded };
}

function dictionaryOffset(meta: RowGroup['columns'][number]['meta_data']): number | undefined {
  if (meta?.type !== 'BYTE_ARRAY') return undefined;
  if (!meta.encodings?.some((encoding) => encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY'))
    return undefined;
  return Number(meta.dictionary_page_offset ?? meta.data_page_offset);
}

/** Throws `row-group-too-large` when row group `index` (of `count`) is beyond the limits. */
export function checkRowGroup(index: number, count: number, size: RowGroupSize): void {
  const what = `row group ${index} of ${count} (${describeSize(size)})`;
  const advice =
    'write the file with smaller row groups (DuckDB: ROW_GROUP_SIZE; pyarrow: row_group_size; Spark: parquet.block.size)';
  if (size.compressed > MAX_ROW_GROUP_COMPRESSED_BYTES) {
    throw new RowGroupTooLarge(
      `${what} holds ${grouped(size.compressed)} bytes as stored; the limit is ${grouped(MAX_ROW_GROUP_COMPRESSED_BYTES)} bytes (${MAX_ROW_GROUP_COMPRESSED_BYTES / 2 ** 20} MiB) per row group: ${advice}`,
    );
  }
  if (size.decoded > MAX_ROW_GROUP_BYTES) {
    throw new RowGroupTooLarge(
      `${what} would decode to about ${grouped(Math.round(size.decoded))} bytes; the limit is ${grouped(MAX_ROW_GROUP_BYTES)} bytes (${MAX_ROW_GROUP_BYTES / 2 ** 20} MiB) per row group: ${advice}`,
    );
  }
}

/** "N rows, N bytes uncompressed, N compressed, by its footer". */
export function describeSize(size: RowGroupSize): string {
  return `${size.rows} rows, ${grouped(size.uncompressed)} bytes uncompressed, ${grouped(size.compressed)} compressed, by its footer`;
}

function grouped(n: number): string {
  return n.toLocaleString('en-US');
}

/** A file of which only `regions` are at hand (each holds the bytes from its `start` on). */
export function sparseSource(
  byteLength: number,
  regions: { start: number; bytes: Uint8Array }[],
  fallback: (start: number, end: number) => Promise<Uint8Array>,
): ByteSource {
  return {
    byteLength,
    slice(start, end = byteLength) {
      for (const region of regions) {
        if (start >= region.start && end <= region.start + region.bytes.length) {
          const from = region.bytes.byteOffset + start - region.start;
          return region.bytes.buffer.slice(from, from + end - start) as ArrayBuffer;
        }
      }
      return fallback(start, end).then(
        (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer,
      );
    },
  };
}
