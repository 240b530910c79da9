/**
 * Parquet on every core (parquet-groups.ts): row groups decoded on the pool's threads give
 * exactly the lines reading on the main thread gives, in order; the object is read with
 * one request for the footer and one per row group; the next row groups start before the
 * first is handed on; a reader that the layout misleads asks for the bytes it lacks; a
 * damaged row group fails the object, not the thread; a reader that stops early frees
 * the threads.
 */
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Action } from '../../../shared/job/actions/schema.ts';
import { writeParquet } from '../../../test/gcs/parquet-fixture.ts';
import { compileActionChain } from '../actions/chain.ts';
import { jsonLines, jsonLinesWithActions } from '../inputs/gcs/batches.ts';
import { bufferReader, parquetRows } from '../inputs/gcs/parquet.ts';
import { parquetLayout } from '../inputs/gcs/parquet-layout.ts';
import { nodeParquetModules } from '../inputs/gcs/parquet-node.ts';
import { contentEvents } from '../inputs/gcs/payload.ts';
import { readRowGroups, type StoredObject } from './parquet-groups.ts';
import { parquetWasmModule } from './parquet-wasm.ts';
import { ReadPool } from './read-pool.ts';
import { type ReadTask, readTaskBatches } from './read-task.ts';

const pool = new ReadPool(2);
afterAll(() => pool.close());

/** Row groups of about 3,000 rows (DuckDB rounds), with nulls, JSON and UUID logical types, lists and structs. */
let file: Buffer;
beforeAll(async () => {
  file = await writeParquet(
    `SELECT i AS id, 'name-' || i AS name, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1.5 END AS score,
       i % 3 = 0 AS flag, ('{"k":' || i || '}')::JSON AS doc, uuid '12345678-9abc-def0-1234-56789abcdef0' AS u,
       [i, i + 1] AS pair, {'a': i, 'b': 'x' || i} AS nested, 'ü-' || (i % 7) AS text
     FROM range(11000) t(i)`,
    3000,
  );
});

const task = (extra: Partial<ReadTask> = {}): ReadTask => ({
  meta: { bucket: 'b', name: 'data.parquet', generation: '3', size: file.length },
  preprocessors: ['extension'],
  payload: { payloadMode: 'auto', ignoreLinebreaks: false },
  shape: { fields: { objectName: 'object' } },
  ...extra,
});

/** The object in memory, with the ranges asked of it. */
function stored(bytes: Buffer): StoredObject & { reads: [number, number][] } {
  const reads: [number, number][] = [];
  return {
    byteLength: bytes.length,
    reads,
    async read(start, end) {
      reads.push([start, end]);
      return Buffer.from(bytes.subarray(start, end));
    },
  };
}

async function text(batches: AsyncIterable<{ chunks: Buffer[]; count: number }>) {
  let out = '';
  let count = 0;
  for await (const batch of batches) {
    out += Buffer.concat(batch.chunks).toString();
    count += batch.count;
  }
  return { out, count };
}

/** What the main thread makes of the same object. */
function onMainThread(bytes: Buffer, format = jsonLines) {
  const meta = task().meta;
  return text(
    contentEvents(
      { kind: 'rows', rows: parquetRows(bufferReader(bytes), nodeParquetModules) },
      task().payload,
      format.batcher(task().shape, meta),
      () => {},
    ),
  );
}

describe('parquet row groups on the read threads', () => {
  it('give the lines the main thread gives, in order, with one request per row group and one for the footer', async () => {
    const object = stored(file);
    const threads = await text(readRowGroups(pool, task(), object, () => {}));
    const main = await onMainThread(file);
    expect(threads.count).toBe(11000);
    expect(threads.out).toBe(main.out);
    expect(JSON.parse(threads.out.split('\n')[3001]!)).toMatchObject({
      id: 3001,
      doc: { k: 3001 },
      u: '12345678-9abc-def0-1234-56789abcdef0',
      pair: [3001, 3002],
      nested: { a: 3001, b: 'x3001' },
      object: 'data.parquet',
    });
    const layout = await parquetLayout(bufferReader(file));
    expect(layout.groups.length).toBeGreaterThanOrEqual(3);
    // The footer's read (the whole tail block), then each row group's exact range.
    expect(object.reads).toHaveLength(1 + layout.groups.length);
    expect(object.reads.slice(1).sort((a, b) => a[0] - b[0])).toEqual(
      layout.groups.map((g) => [g.start, g.end]),
    );
  });

  it('apply the job actions on the threads, as the main thread does', async () => {
    const list: Action[] = [
      { filter: 'event.id < 5000.0' },
      { set: { label: 'event.name + "!"' } },
      { remove: ['doc', 'u'] },
    ];
    const actions = { list, job: 'j', worker: 'w' };
    let dropped = 0;
    const threads = await text(
      readRowGroups(
        pool,
        task({ actions }),
        stored(file),
        () => {},
        (report) => {
          dropped += report.stats.dropped[0] ?? 0;
        },
      ),
    );
    const chain = compileActionChain(list);
    chain.bind({ job: 'j', worker: 'w' });
    const main = await onMainThread(file, jsonLinesWithActions(chain));
    expect(threads.count).toBe(5000);
    expect(threads.out).toBe(main.out);
    expect(threads.out).toContain('"label":"name-4999!"');
    expect(threads.out).not.toContain('"doc"');
    expect(dropped).toBe(6000);
  });

  it('start the next row groups before the first is handed on', async () => {
    const object = stored(file);
    const batches = readRowGroups(pool, task(), object, () => {});
    await batches.next();
    const layout = await parquetLayout(bufferReader(file));
    // Two threads: row groups 0 and 1 were fetched (and sent to decode) together.
    expect(object.reads.map(([start]) => start)).toEqual(
      expect.arrayContaining([layout.groups[0]!.start, layout.groups[1]!.start]),
    );
    await batches.return(undefined);
  });

  it('ask for the bytes the layout did not hand over', async () => {
    const layout = await parquetLayout(bufferReader(file));
    const asked: [number, number][] = [];
    const groupTask = task({
      parquet: {
        module: await parquetWasmModule(),
        rowGroup: 2,
        byteLength: file.length,
        schema: layout.schema,
        // Only the footer: the row group's bytes must be asked for.
        regions: [{ start: layout.tail.start, length: layout.tail.bytes.length }],
      },
    });
    async function* footer() {
      yield Buffer.from(layout.tail.bytes);
    }
    let lines = '';
    for await (const batch of readTaskBatches(groupTask, footer(), () => {}, {
      readRange: async (start, end) => {
        asked.push([start, end]);
        return file.subarray(start, end);
      },
    }))
      lines += Buffer.concat(batch.lines?.chunks ?? []).toString();
    expect(asked).toEqual([[layout.groups[2]!.start, layout.groups[2]!.end]]);
    const { row_groups } = parquetMetadata(new Uint8Array(file).buffer);
    const first = Number(row_groups[0]!.num_rows) + Number(row_groups[1]!.num_rows);
    const ids = lines
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).id);
    expect(ids).toEqual(Array.from({ length: Number(row_groups[2]!.num_rows) }, (_, i) => first + i));
  });

  it('fail the object on a damaged row group, and the threads read the next object', async () => {
    const layout = await parquetLayout(bufferReader(file));
    const damaged = Buffer.from(file);
    const group = layout.groups[1]!;
    damaged.fill(0xab, group.start + 100, group.end - 100);
    await expect(text(readRowGroups(pool, task(), stored(damaged), () => {}))).rejects.toThrow();
    expect((await text(readRowGroups(pool, task(), stored(file), () => {}))).count).toBe(11000);
  });

  it('a reader that stops early leaves no task on the threads', async () => {
    for await (const _ of readRowGroups(pool, task(), stored(file), () => {})) break;
    expect(pool.tasksRunning).toBe(0);
  });
});
