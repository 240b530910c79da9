/**
 * A parquet object read on every core. Its footer is read here (parquet-layout.ts); then
 * each row group is a read task of its own on the pool, its bytes fetched with one range
 * request and handed over with the footer. One row group more than the pool has threads
 * is fetched and decoded at once (a thread that finishes one finds the next waiting), the
 * first of them going out meanwhile; the lines come out in row-group order, exactly as
 * reading on the main thread gives them.
 *
 * @example
 *   for await (const lines of readRowGroups(pool, task, { byteLength, read }, problem)) deliver(lines);
 */

import { rangeReader } from '../inputs/gcs/parquet.ts';
import { parquetLayout } from '../inputs/gcs/parquet-layout.ts';
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
  const start = (rowGroup: number): Started<JsonLines> => {
    const group = layout.groups[rowGroup]!;
    const bytes =
      group.end > group.start ? object.read(group.start, group.end) : Promise.resolve(Buffer.alloc(0));
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
    return started(pool.read(groupTask, fed(), problem, onActions, (from, to) => object.read(from, to)));
  };
  const running: Started<JsonLines>[] = [];
  let next = 0;
  const fill = () => {
    while (next < layout.groups.length && running.length < pool.size + 1) running.push(start(next++));
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
