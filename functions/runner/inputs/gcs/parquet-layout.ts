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
 * @example
 *   const layout = await parquetLayout(rangeReader(size, read));
 *   const group = await read(layout.groups[0].start, layout.groups[0].end - 1);
 */
import type { SchemaElement } from 'hyparquet';
import type { ByteSource } from './parquet.ts';

export interface ParquetLayout {
  byteLength: number;
  schema: SchemaElement[];
  /** The footer and what follows it: the file's last `metadata_length + 8` bytes. */
  tail: { start: number; bytes: Uint8Array };
  /** Each row group's bytes: from its first column chunk to the end of its last. */
  groups: { start: number; end: number }[];
}

export async function parquetLayout(file: ByteSource): Promise<ParquetLayout> {
  const { parquetMetadataAsync } = await import('hyparquet');
  const metadata = await parquetMetadataAsync(file);
  const tailStart = file.byteLength - metadata.metadata_length - 8;
  const tail = new Uint8Array(await file.slice(tailStart, file.byteLength));
  const groups = metadata.row_groups.map((group) => {
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
  });
  return {
    byteLength: file.byteLength,
    schema: metadata.schema,
    tail: { start: tailStart, bytes: tail },
    groups,
  };
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
