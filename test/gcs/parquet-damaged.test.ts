/**
 * A damaged parquet object among good ones read at the same time (`wasm-trap.ts`): the
 * decoder traps on it, that object is reported, and every row of the others is delivered.
 * The decoder is one WebAssembly instance per thread, shared by the objects read at once,
 * and the trap does not say whose read it was.
 */
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool } from '../../functions/runner/cores/read-pool.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import { type GcsTestEnv, gcsTestEnv } from './helpers.ts';
import { writeParquet } from './parquet-fixture.ts';

const GOOD = 7;
const ROWS = 20_000;
const GROUP_ROWS = 2_000;

let env: GcsTestEnv;
const pool = new ReadPool(2);

beforeAll(async () => {
  env = await gcsTestEnv();
  const written = {
    duckdb: await writeParquet(`SELECT i AS id, 'row-' || i AS label FROM range(${ROWS}) t(i)`, GROUP_ROWS),
    rust: await rustParquet(),
  };
  for (const [writer, good] of Object.entries(written)) {
    await env.put(`${writer}/a0.parquet`, damaged(good));
    for (let k = 1; k <= GOOD; k++) await env.put(`${writer}/a${k}.parquet`, good);
  }
  // Every request takes a while, so that the objects' reads overlap.
  env.emulator.setFaults({ latencyMs: 20 });
});
afterAll(async () => {
  await pool.close();
  await env.stop();
});

describe('a damaged parquet object read with good ones', () => {
  it.each([
    // A slow output: the good objects are still being read when the damaged one traps.
    ['on the main thread', 'duckdb', { readPool: null, deliver: slowly }],
    // Row groups side by side on two threads. parquet-rs writes page indexes apart from the
    // row groups, which a thread asks the main thread for: its row groups' reads overlap.
    ['on the read threads', 'rust', { readPool: pool, asJsonLines: true }],
  ] as const)(
    '%s: the damaged object is reported, every row of the good ones is delivered',
    async (_, writer, where) => {
      delivered.length = 0;
      const { events, reports, ended } = await env.run(
        { 'object-names': [`${writer}/`], preprocessors: ['extension'], 'object-name-field': 'object' },
        { ...where, concurrency: GOOD + 1 },
      );
      const failed = reports.filter((r) => r.type === 'job-errors').map((r) => r.payload.object);
      expect(failed).toEqual([`${writer}/a0.parquet`]);
      expect(ended).toMatchObject({ failed_objects: 1 });
      const rows = new Map<unknown, number>();
      for (const event of [...events, ...delivered])
        rows.set(event.object, (rows.get(event.object) ?? 0) + 1);
      for (let k = 1; k <= GOOD; k++) expect(rows.get(`${writer}/a${k}.parquet`), `a${k}.parquet`).toBe(ROWS);
    },
  );
});

const delivered: RunEvent[] = [];

async function slowly(batch: RunEvent[]): Promise<void> {
  delivered.push(...batch);
  await new Promise((resolve) => setTimeout(resolve, 5));
}

/** `good` with its second row group's first data page header overwritten: the decoder traps on it. */
function damaged(good: Buffer): Buffer {
  const bytes = Buffer.from(good);
  const { row_groups } = parquetMetadata(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer,
  );
  const at = Number(row_groups[1]!.columns[0]!.meta_data!.data_page_offset);
  bytes.fill(0xff, at, at + 64);
  return bytes;
}

/** The same rows written by parquet-rs (parquet-wasm's writer, as Rust and Arrow tools write them). */
async function rustParquet(): Promise<Buffer> {
  const [{ Table, WriterPropertiesBuilder, writeParquet }, { tableFromArrays, tableToIPC }] =
    await Promise.all([import('parquet-wasm'), import('apache-arrow')]);
  const id = Int32Array.from({ length: ROWS }, (_, i) => i);
  const label = Array.from(id, (i) => `row-${i}`);
  const table = Table.fromIPCStream(tableToIPC(tableFromArrays({ id, label }), 'stream'));
  const properties = new WriterPropertiesBuilder().setMaxRowGroupSize(GROUP_ROWS).build();
  return Buffer.from(writeParquet(table, properties));
}
