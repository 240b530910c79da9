/**
 * A read thread busy in one long batch of slow events (each within the time limit of an
 * event's expressions, together seconds of synchronous work) does not hold a run that is
 * stopped: the read ends at its signal, the thread that does not answer the stop within
 * CANCEL_DEADLINE_MS is terminated, and the pool's next objects go to a new thread, not
 * behind the stuck one. The pool's counts stay right throughout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CANCEL_DEADLINE_MS, ReadPool } from '../../functions/runner/cores/read-pool.ts';
import type { ReadTask } from '../../functions/runner/cores/read-task.ts';
import type { Action } from '../../shared/job/actions/schema.ts';
import { validActions } from '../helpers/actions.ts';

/** About MAX_EVENT_EVALUATION_MS per slow event: 10^6 steps, each scanning 256 KiB. */
const FILTER = 'event.xs.exists(x, event.xs.exists(y, event.s.contains("zq")))';
const SLOW_LINE = `${JSON.stringify({ s: 'a'.repeat(256 << 10), xs: new Array(1000).fill(0) })}\n`;
/** One chunk, one batch: the thread holds it for seconds without a look at its messages. */
const SLOW_CHUNK = Buffer.from(SLOW_LINE.repeat(8));
const FAST_CHUNK = Buffer.from(
  [1, 2, 3].map((i) => `${JSON.stringify({ s: `zq-${i}`, xs: [i] })}\n`).join(''),
);

const actions: Action[] = validActions([{ filter: FILTER }]);

function task(name: string): ReadTask {
  return {
    meta: { bucket: 'b', name, generation: '1', size: 0 },
    preprocessors: ['extension'],
    payload: { payloadMode: 'auto', ignoreLinebreaks: false, maxLineBytes: 8 << 20 },
    shape: { fields: {} },
    actions: { list: actions, job: 'j', worker: 'w' },
  };
}

/** A few fast lines, then slow ones, then no end. */
async function* stuckObject(): AsyncGenerator<Buffer> {
  yield FAST_CHUNK;
  yield SLOW_CHUNK;
  for (;;) yield SLOW_CHUNK;
}

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

let pool: ReadPool;
afterEach(async () => {
  await pool?.close();
});

describe('a read thread stuck in slow events', () => {
  it('a stopped run’s read ends at its signal, and the stuck thread is terminated', {
    timeout: 120_000,
  }, async () => {
    pool = new ReadPool(1);
    const stop = new AbortController();
    let events = 0;
    let stoppedAt = 0;
    const reading = (async () => {
      // As the gcs input reads: it looks at the run's signal between batches.
      for await (const batch of pool.read(
        task('stuck.json'),
        stuckObject(),
        () => {},
        undefined,
        undefined,
        stop.signal,
      )) {
        stop.signal.throwIfAborted();
        events += batch.count;
        // The fast lines are in: the thread is now in the slow ones. The run is stopped.
        stoppedAt = performance.now();
        stop.abort();
      }
    })();
    await expect(reading).rejects.toThrow();
    const ended = performance.now() - stoppedAt;
    expect(events).toBe(3);
    expect(ended).toBeLessThan(1_000);
    // The thread did not answer (it is in its batch of slow events): terminated.
    await waitFor(() => pool.threads === 0, CANCEL_DEADLINE_MS + 3_000);
    expect(performance.now() - stoppedAt).toBeLessThan(CANCEL_DEADLINE_MS + 3_000);
    expect(pool.threads).toBe(0);
    expect(pool.tasksRunning).toBe(0);
    expect(pool.workingPerThread).toEqual([]);
    // The next object goes to a new thread.
    const next: string[] = [];
    for await (const batch of pool.read(task('next.json'), once(FAST_CHUNK), () => {}))
      next.push(...Buffer.concat(batch.chunks).toString().split('\n').slice(0, -1));
    expect(next).toHaveLength(3);
    expect(pool.threads).toBe(1);
    expect(pool.workingPerThread).toEqual([0]);
  });

  it('an object given to the pool after a reader gave up on a stuck thread is read within seconds', {
    timeout: 120_000,
  }, async () => {
    pool = new ReadPool(1);
    for await (const batch of pool.read(task('stuck.json'), stuckObject(), () => {})) {
      expect(batch.count).toBe(3);
      break;
    }
    // Told to stop, still in its slow events, and silent: the next object goes to a new
    // thread rather than behind it, and the stuck one is terminated.
    await new Promise((r) => setTimeout(r, 400));
    const started = performance.now();
    const next: string[] = [];
    for await (const batch of pool.read(task('next.json'), once(FAST_CHUNK), () => {}))
      next.push(...Buffer.concat(batch.chunks).toString().split('\n').slice(0, -1));
    expect(next).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(CANCEL_DEADLINE_MS + 3_000);
    await waitFor(() => pool.threads === 1, CANCEL_DEADLINE_MS + 3_000);
    expect(pool.threads).toBe(1);
    expect(pool.workingPerThread).toEqual([0]);
    expect(pool.tasksRunning).toBe(0);
    const again: number[] = [];
    for await (const batch of pool.read(task('again.json'), once(FAST_CHUNK), () => {}))
      again.push(batch.count);
    expect(again).toEqual([3]);
  });

  it('a thread that answers the stop in time is kept', { timeout: 60_000 }, async () => {
    pool = new ReadPool(1);
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) yield FAST_CHUNK;
    }
    for await (const batch of pool.read(task('fast.json'), endless(), () => {})) {
      expect(batch.count).toBe(3);
      break;
    }
    await waitFor(() => pool.workingPerThread[0] === 0, CANCEL_DEADLINE_MS);
    expect(pool.workingPerThread).toEqual([0]);
    await new Promise((r) => setTimeout(r, CANCEL_DEADLINE_MS + 500));
    expect(pool.threads).toBe(1);
    const next = [];
    for await (const batch of pool.read(task('next.json'), once(FAST_CHUNK), () => {}))
      next.push(batch.count);
    expect(next).toEqual([3]);
  });
});
