/**
 * Parquet objects as JSON rows, row group by row group, so memory holds at most two row
 * groups (the one going out and the next), not the file. Decoding is `parquet-wasm` (the Apache Arrow project's Rust parquet
 * reader compiled to WebAssembly: every encoding and codec, nested types, and several times
 * faster than the pure-JS reader we had); it hands each row group over as Arrow IPC,
 * which `apache-arrow` reads without copying and `arrow-rows.ts` turns into objects.
 * Both load on the first parquet object, not at start-up (together about 0.3 s): from
 * node_modules on the main thread (parquet-node.ts), bundled in a read thread, which reads
 * one row group of a file per task (`rowGroups`; runner/cores/parquet-groups.ts). hyparquet
 * (pure JS, small) reads the footer for the logical types Arrow does not keep
 * (parquet-logical.ts).
 *
 * The file is read through a `ByteSource`: range requests straight from Cloud Storage
 * with read-ahead, or an in-memory buffer when an earlier preprocessor (gzip) produced
 * the bytes. parquet-wasm reads ranges from a Blob; `asBlob` gives it one over the source
 * (it calls only `size`, `slice(start, end)` and `arrayBuffer()`).
 *
 * @example
 *   for await (const slice of parquetRows(rangeReader(size, read), nodeParquetModules)) deliver(slice.rows());
 */
import type { SchemaElement } from 'hyparquet';
import type { ParquetFile, Table as WasmTable } from 'parquet-wasm';
import { batchRows, type RowSlice } from './arrow-rows.ts';
import { logicalTypeFixes } from './parquet-logical.ts';
import { trapGuard } from './wasm-trap.ts';

/** Smallest range request when reading parquet from storage: few requests per row group. */
export const READ_AHEAD_BYTES = 8 * 1024 * 1024;

/**
 * Rows per yielded array: small enough that a slice's objects die young (cheap garbage
 * collection) once the output has them, large enough to keep per-call overhead small.
 */
export const ROWS_PER_SLICE = 1024;

/** Random access to the bytes of a parquet file. */
export interface ByteSource {
  byteLength: number;
  slice(start: number, end?: number): ArrayBuffer | Promise<ArrayBuffer>;
}

/** The two libraries that decode parquet: loaded here from node_modules, bundled in a read thread. */
export interface ParquetModules {
  ParquetFile: typeof import('parquet-wasm').ParquetFile;
  arrow: typeof import('apache-arrow');
}

export interface ParquetRowsOptions {
  /** Only these row groups, in this order (default: all). */
  rowGroups?: readonly number[];
  /** The file's schema when the caller read the footer already (parquetLayout). */
  schema?: SchemaElement[];
  /** Rows per slice (default ROWS_PER_SLICE). */
  rowsPerSlice?: number;
}

/** `modules` loads the decoder: `nodeParquetModules` (parquet-node.ts), or a read thread's own. */
export async function* parquetRows(
  file: ByteSource,
  modules: () => Promise<ParquetModules>,
  options: ParquetRowsOptions = {},
): AsyncGenerator<RowSlice> {
  const [{ ParquetFile, arrow }, schema] = await Promise.all([
    modules(),
    options.schema ??
      import('hyparquet').then(async ({ parquetMetadataAsync }) => (await parquetMetadataAsync(file)).schema),
  ]);
  const fixes = await logicalTypeFixes(schema);
  const perSlice = options.rowsPerSlice ?? ROWS_PER_SLICE;
  const guard = trapGuard();
  let parquet: ParquetFile | undefined;
  let next: Promise<WasmTable> | undefined;
  try {
    const opened = await guard.run(
      () => ParquetFile.fromFile(asBlob(file)),
      (late) => late.free(),
    );
    parquet = opened;
    const metadata = opened.metadata();
    const count = metadata.numRowGroups();
    metadata.free();
    const groups = options.rowGroups ?? Array.from({ length: count }, (_, g) => g);
    // One batch per row group (up to this size): fewer, larger column loops in arrow-rows.
    const read = (group: number) => {
      const table = guard.run(
        () => opened.read({ rowGroups: [group], batchSize: 1 << 20 }),
        (late) => late.free(),
      );
      // Awaited only after the rows before it went out: until then, a failure is not unhandled.
      table.catch(() => {});
      return table;
    };
    // The next row group is fetched and decoded while this one's rows go out, so the wait
    // for its bytes is hidden; memory holds at most two row groups.
    next = groups.length > 0 ? read(groups[0]!) : undefined;
    for (let g = 0; g < groups.length; g++) {
      const ipc = (await next!).intoIPCStream();
      next = g + 1 < groups.length ? read(groups[g + 1]!) : undefined;
      for (const batch of arrow.tableFromIPC(ipc).batches) {
        for (let start = 0; start < batch.numRows; start += perSlice)
          yield batchRows(arrow, batch, start, Math.min(batch.numRows, start + perSlice), fixes);
      }
    }
  } finally {
    // A consumer that stopped early: let the read in flight settle before freeing the file.
    if (next) await next.then((table) => table.free()).catch(() => {});
    try {
      parquet?.free();
    } catch {
      // The decoder trapped earlier (that error is the one reported).
    }
    guard.close();
  }
}

/** A ByteSource over `read(start, endInclusive)` that fetches at least READ_AHEAD_BYTES at a time. */
export function rangeReader(
  byteLength: number,
  read: (start: number, end: number) => Promise<Buffer>,
): ByteSource {
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

/** A ByteSource over bytes in memory. */
export function bufferReader(bytes: Buffer): ByteSource {
  return { byteLength: bytes.length, slice: (start, end) => toArrayBuffer(bytes.subarray(start, end)) };
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
}

/** The part of the Blob interface parquet-wasm uses, over a ByteSource. */
function asBlob(file: ByteSource, start = 0, end = file.byteLength): Blob {
  const part = {
    size: end - start,
    slice: (from = 0, to = end - start) => asBlob(file, start + from, start + Math.min(to, end - start)),
    arrayBuffer: async () => file.slice(start, end),
  };
  return part as unknown as Blob;
}
