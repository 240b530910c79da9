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
import type { FileMetaData, SchemaElement } from 'hyparquet';
import type { ParquetFile, Table as WasmTable } from 'parquet-wasm';
import { batchRows, type RowSlice } from './arrow-rows.ts';
import {
  checkRowGroup,
  describeSize,
  footerError,
  hasStringDictionaries,
  MAX_ROW_GROUP_BYTES,
  type RowGroupSize,
  RowGroupTooLarge,
  readFooter,
  rowGroupSize,
  withDictionaries,
} from './parquet-layout.ts';
import { logicalTypeFixes } from './parquet-logical.ts';
import { trapGuard } from './wasm-trap.ts';

/** Smallest range request when reading parquet from storage: few requests per row group. */
export const READ_AHEAD_BYTES = 8 * 1024 * 1024;

/**
 * Rows per yielded array: small enough that a slice's objects die young (cheap garbage
 * collection) once the output has them, large enough to keep per-call overhead small.
 */
export const ROWS_PER_SLICE = 1024;

/**
 * The decoder's memory (WebAssembly, at most 4 GiB) beyond which a trap while decoding is
 * taken for running out of memory rather than for damaged data (both end in `unreachable`).
 */
const OUT_OF_MEMORY_BYTES = 2 * 1024 * 1024 * 1024;

/** Random access to the bytes of a parquet file. */
export interface ByteSource {
  byteLength: number;
  slice(start: number, end?: number): ArrayBuffer | Promise<ArrayBuffer>;
}

/** The two libraries that decode parquet: loaded here from node_modules, bundled in a read thread. */
export interface ParquetModules {
  ParquetFile: typeof import('parquet-wasm').ParquetFile;
  arrow: typeof import('apache-arrow');
  /** The decoder's WebAssembly memory, where known: to tell running out of it from damaged data. */
  memory?: () => WebAssembly.Memory;
}

export interface ParquetRowsOptions {
  /** Only these row groups, in this order (default: all). */
  rowGroups?: readonly number[];
  /**
   * The file's schema when the caller read the footer already (parquetLayout); the caller
   * then checked the row groups' sizes (`checkRowGroup`) too.
   */
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
  const [{ ParquetFile, arrow, memory }, footer] = await Promise.all([
    modules(),
    options.schema ? undefined : readFooter(file),
  ]);
  const schema = options.schema ?? footer!.schema;
  const fixes = await logicalTypeFixes(schema).catch((err) => {
    throw footerError(err);
  });
  const perSlice = options.rowsPerSlice ?? ROWS_PER_SLICE;
  const guard = trapGuard();
  let parquet: ParquetFile | undefined;
  let next: Promise<WasmTable> | undefined;
  try {
    const opened = await guard
      .run(
        () => ParquetFile.fromFile(asBlob(file)),
        (late) => late.free(),
      )
      .catch((err) => {
        // It reads only the footer (hyparquet read it already: a failed read would have failed there).
        throw footer ? footerError(err) : err;
      });
    parquet = opened;
    const metadata = opened.metadata();
    const count = metadata.numRowGroups();
    metadata.free();
    const groups = options.rowGroups ?? Array.from({ length: count }, (_, g) => g);
    // Every row group within the limits by its footer before any row goes out.
    const sizes = footer?.row_groups.map((row) => rowGroupSize(row));
    for (const [g, size] of (sizes ?? []).entries()) checkRowGroup(g, count, size);
    // One batch per row group (up to this size): fewer, larger column loops in arrow-rs.
    const read = async (group: number) => {
      if (footer && hasStringDictionaries(footer.row_groups[group]!)) {
        // Its dictionaries' headers are in its bytes, which the decoder then reads from the
        // same block of a rangeReader (no second request).
        const span = groupSpan(footer, group, file.byteLength);
        const bytes = new Uint8Array(await file.slice(span.start, span.end));
        sizes![group] = await withDictionaries(footer.row_groups[group]!, sizes![group]!, {
          start: span.start,
          bytes,
        });
        checkRowGroup(group, count, sizes![group]!);
      }
      return await guard
        .run(
          () => opened.read({ rowGroups: [group], batchSize: 1 << 20 }),
          (late) => late.free(),
        )
        .catch((err) => {
          throw decodingError(err, group, sizes?.[group], memory);
        });
    };
    const start = (group: number) => {
      const table = read(group);
      // Awaited only after the rows before it went out: until then, a failure is not unhandled.
      table.catch(() => {});
      return table;
    };
    // The next row group is fetched and decoded while this one's rows go out, so the wait
    // for its bytes is hidden; memory holds at most two row groups, and only one when the
    // two would decode to more than MAX_ROW_GROUP_BYTES.
    const together = (g: number) =>
      !sizes || sizes[groups[g]!]!.decoded + sizes[groups[g + 1]!]!.decoded <= MAX_ROW_GROUP_BYTES;
    next = groups.length > 0 ? start(groups[0]!) : undefined;
    for (let g = 0; g < groups.length; g++) {
      const table = await next!;
      next = undefined;
      let ipc: Uint8Array;
      try {
        ipc = table.intoIPCStream();
      } catch (err) {
        throw decodingError(err, groups[g]!, sizes?.[groups[g]!], memory);
      }
      const early = g + 1 < groups.length && together(g);
      if (early) next = start(groups[g + 1]!);
      for (const batch of arrow.tableFromIPC(ipc).batches) {
        for (let from = 0; from < batch.numRows; from += perSlice)
          yield batchRows(arrow, batch, from, Math.min(batch.numRows, from + perSlice), fixes);
      }
      if (!early && g + 1 < groups.length) next = start(groups[g + 1]!);
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

/** Row group `group`'s bytes: from its first column chunk to the end of its last. */
function groupSpan(footer: FileMetaData, group: number, byteLength: number): { start: number; end: number } {
  let start = byteLength;
  let end = 0;
  for (const column of footer.row_groups[group]!.columns) {
    const meta = column.meta_data;
    if (!meta) continue;
    const first = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
    start = Math.min(start, first);
    end = Math.max(end, first + Number(meta.total_compressed_size));
  }
  return start < end && end <= byteLength ? { start, end } : { start: 0, end: 0 };
}

/**
 * A failure decoding row group `group`: running out of memory (a footer that understates
 * the row group) is told as such, with what its footer says, rather than as damaged data.
 */
function decodingError(
  err: unknown,
  group: number,
  size: RowGroupSize | undefined,
  memory: (() => WebAssembly.Memory) | undefined,
): unknown {
  if (!(err instanceof Error)) return err;
  const footer = size
    ? `its footer says ${describeSize(size).replace(/, by its footer$/, '')}`
    : 'see its footer';
  const trap = /^the parquet decoder failed on damaged data \((.*)\)$/.exec(err.message);
  const outOfMemory =
    (err instanceof RangeError &&
      /allocation failed|out of memory|invalid typed array length/i.test(err.message)) ||
    (trap !== null && /out of memory|memory access out of bounds/i.test(trap[1]!)) ||
    (trap !== null && (memory?.().buffer.byteLength ?? 0) >= OUT_OF_MEMORY_BYTES);
  if (outOfMemory) {
    return new RowGroupTooLarge(
      `out of memory decoding row group ${group} (${footer}): write the file with smaller row groups`,
      { cause: err },
    );
  }
  if (trap && !memory) {
    // On a read thread the decoder's memory is not at hand: either may be the cause.
    return new Error(
      `the parquet decoder failed decoding row group ${group}, on damaged data or out of memory (${trap[1]}; ${footer})`,
      { cause: err },
    );
  }
  if (trap) return new Error(`${err.message.slice(0, -1)}; row group ${group})`, { cause: err });
  return err;
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
