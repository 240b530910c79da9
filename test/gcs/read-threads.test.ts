/**
 * Which objects the gcs input hands to the read threads: an object read alone (a run of one
 * object) stays on the main thread, where it is read faster (no core to gain, no hand-overs);
 * objects read while others are, or with others waiting after them, go to the threads. The
 * events are the same either way.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool } from '../../functions/runner/cores/read-pool.ts';
import { type GcsTestEnv, gcsTestEnv } from './helpers.ts';

class CountingPool extends ReadPool {
  reads = 0;
  readNames: string[] = [];
  override read(...args: Parameters<ReadPool['read']>): ReturnType<ReadPool['read']> {
    this.reads++;
    this.readNames.push(args[0].meta.name);
    return super.read(...args);
  }
}

let env: GcsTestEnv;
const pool = new CountingPool(2);
const lines = (n: number, object: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ object, i })).join('\n');

beforeAll(async () => {
  env = await gcsTestEnv();
  await env.put('one/only.json.gz', gzipSync(lines(5000, 0)));
  for (let k = 0; k < 8; k++) await env.put(`many/${k}.json.gz`, gzipSync(lines(2000, k)));
});
afterAll(async () => {
  await pool.close();
  await env.stop();
});

describe('objects on the read threads', () => {
  it('an object read alone is read on the main thread', async () => {
    pool.reads = 0;
    const { events } = await env.run(
      { 'object-names': ['one/'], preprocessors: ['extension'] },
      { asJsonLines: true, readPool: pool },
    );
    expect(events).toHaveLength(5000);
    expect(pool.reads).toBe(0);
  });

  it('objects read while others are, or with others after them, go to the threads, with the same events', async () => {
    pool.reads = 0;
    pool.readNames = [];
    const { events } = await env.run(
      { 'object-names': ['many/'], preprocessors: ['extension'] },
      { asJsonLines: true, readPool: pool },
    );
    expect(events).toHaveLength(16_000);
    // Four at a time. The first starts while nothing else is read, but seven wait after it:
    // on a thread too (read here, it made V8 optimise the reading code for this thread as well).
    expect(pool.readNames).toContain('many/0.json.gz');
    expect(pool.reads).toBeGreaterThanOrEqual(7);
    const main = await env.run(
      { 'object-names': ['many/'], preprocessors: ['extension'] },
      { asJsonLines: true, readPool: null },
    );
    const sorted = (list: unknown[]) => list.map((e) => JSON.stringify(e)).sort();
    expect(sorted(events)).toEqual(sorted(main.events));
  });

  it('a run stopped while objects are read on the threads delivers nothing more', async () => {
    for (let k = 0; k < 4; k++) await env.put(`stopped/${k}.json.gz`, gzipSync(lines(60_000, k)));
    for (const ordered of [false, true]) {
      const stop = new AbortController();
      let afterStop = 0;
      const { ended } = await env.run(
        { 'object-names': ['stopped/'], preprocessors: ['extension'], ordered },
        {
          asJsonLines: true,
          readPool: pool,
          signal: stop.signal,
          afterDelivery: (count) => {
            if (stop.signal.aborted) afterStop += count;
            else stop.abort();
          },
        },
      );
      expect(ended.aborted, `ordered: ${ordered}`).toBe(true);
      expect(afterStop, `ordered: ${ordered}`).toBe(0);
    }
  });

  it('a damaged object read on a thread fails with the same reason as on the main thread', async () => {
    const whole = gzipSync(lines(20_000, 9));
    await env.put('damaged/0.json.gz', whole.subarray(0, whole.length >> 1));
    for (let k = 1; k < 4; k++) await env.put(`damaged/${k}.json.gz`, gzipSync(lines(100, k)));
    const reasons = async (readPool: ReadPool | null) => {
      const { reports } = await env.run(
        { 'object-names': ['damaged/'], preprocessors: ['extension'] },
        { asJsonLines: true, readPool },
      );
      return reports
        .filter((r) => r.type === 'job-errors')
        .map((r) => [(r.payload as { object?: string }).object, (r.payload as { reason?: string }).reason]);
    };
    const messages = async (readPool: ReadPool | null) => {
      const { reports } = await env.run(
        { 'object-names': ['damaged/'], preprocessors: ['extension'] },
        { asJsonLines: true, readPool },
      );
      return reports
        .filter((r) => r.type === 'job-errors')
        .map((r) =>
          String((r.payload as { message?: string }).message).replace(/first \d+ events/, 'first N events'),
        );
    };
    pool.readNames = [];
    const threads = await reasons(pool);
    expect(pool.readNames).toContain('damaged/0.json.gz');
    expect(threads).toEqual(await reasons(null));
    expect(threads).toEqual([['damaged/0.json.gz', 'damaged-object']]);
    // The same cause in the message: the zlib error, whichever thread read it.
    expect(await messages(pool)).toEqual(await messages(null));
    expect((await messages(null))[0]).toContain('Z_BUF_ERROR: unexpected end of file');
  });
});
