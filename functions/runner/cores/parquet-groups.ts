/**
 * A parquet object read on every core. Its footer is read here (parquet-layout.ts); then
 * each row group is a read task of its own on the pool, its bytes fetched with one range
 * request and handed over with the footer. One row group more than the pool has threads
 * is fetched and decoded at once (a thread that finishes one finds the next waiting), the
 * first of them going out meanwhile; the lines come out in row-group order, exactly as
 * reading on the main thread gives them. Fewer when together they would decode to more
 * than MAX_ROW_GROUP_BYTES; a row group beyond the limits is refused before any row goes
 * out (by its footer), or, once its bytes show what its dictionaries expand to, before it
 * is handed to a thread (`row-group-too-large`, parquet-layout.ts).
 *
 * @example
 *   for await (const lines of readRowGroups(pool, task, { byteLength, read }, problem)) deliver(lines);
 */

import { rangeReader } from '../inputs/gcs/parquet.ts';
import {
  checkRowGroup,
  MAX_ROW_GROUP_BYTES,
  parquetLayout,
  withDictionaries,
} from '../inputs/gcs/parquet-layout.ts';
import type { ProblemReporter } from '../inputs/gcs/payload.ts';
import type { JsonLines } from '../types.ts';
import { parquetWasmModule } from './parquet-wasm.ts';
import type { ReadPool } from './read-pool.ts';
import type { ActionReport, ReadTask } from './read-task.ts';

/** Random access to a stored object. */
export interface StoredObject {
  byteLength: number;
  /** Bytes `start` to `end` (exclusive). */
  read(start: number, end: number): Promise<Buffer>;
}

export async function* readRowGroups(
  pool: ReadPool,
  task: ReadTask,
  object: StoredObject,
  problem: ProblemReporter,
  onActions?: (report: ActionReport) => void,
): AsyncGenerator<JsonLines> {
  const [layout, module] = await Promise.all([
    parquetLayout(rangeReader(object.byteLength, (start, end) => object.read(start, end + 1))),
    parquetWasmModule(),
  ]);
  const { tail } = layout;
  const count = layout.groups.length;
  for (const [g, group] of layout.groups.entries()) checkRowGroup(g, count, group.size);
  const start = (rowGroup: number): Started<JsonLines> => {
    const group = layout.groups[rowGroup]!;
    const bytes = (async () => {
      if (group.end <= group.start) return Buffer.alloc(0);
      const read = await object.read(group.start, group.end);
      const size = await withDictionaries(group.row, group.size, { start: group.start, bytes: read });
      checkRowGroup(rowGroup, count, size);
      return read;
    })();
    // Awaited when the thread asks for it; until then a failure is not unhandled.
    bytes.catch(() => {});
    async function* fed(): AsyncGenerator<Buffer> {
      yield Buffer.from(tail.bytes.buffer, tail.bytes.byteOffset, tail.bytes.length);
      yield await bytes;
    }
    const groupTask: ReadTask = {
      ...task,
      parquet: {
        module,
        rowGroup,
        byteLength: layout.byteLength,
        schema: layout.schema,
        regions: [
          { start: tail.start, length: tail.bytes.length },
          { start: group.start, length: group.end - group.start },
        ],
      },
    };
    // Handed to a thread once its bytes are checked: a refusal keeps its reason (code) as told.
    async function* checked(): AsyncGenerator<JsonLines> {
      await bytes;
      yield* pool.read(groupTask, fed(), problem, onActions, (from, to) => object.read(from, to));
    }
    return started(checked());
  };
  const running: (Started<JsonLines> & { decoded: number })[] = [];
  let next = 0;
  const fill = () => {
    while (next < count && running.length < pool.size + 1) {
      const decoded = layout.groups[next]!.size.decoded;
      const inFlight = running.reduce((sum, group) => sum + group.decoded, 0);
      if (running.length > 0 && inFlight + decoded > MAX_ROW_GROUP_BYTES) break;
      running.push({ ...start(next++), decoded });
    }
  };
  try {
    fill();
    while (running.length > 0) {
      const { batches, first } = running[0]!;
      for (let result = await first; !result.done; result = await batches.next()) yield result.value;
      running.shift();
      fill();
    }
  } finally {
    // Stopped early (a failure, or the reader went away): the row groups read ahead stop too.
    await Promise.all(
      running.map(({ batches, first }) => first.then(() => batches.return(undefined)).catch(() => {})),
    );
  }
}

interface Started<T> {
  batches: AsyncGenerator<T>;
  first: Promise<IteratorResult<T>>;
}

/** A generator asked for its first item now, so that its work starts before its turn. */
function started<T>(batches: AsyncGenerator<T>): Started<T> {
  const first = batches.next();
  first.catch(() => {});
  return { batches, first };
}
