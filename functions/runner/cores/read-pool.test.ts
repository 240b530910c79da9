/**
 * The read pool gives, for any object, exactly what reading it on the main thread gives:
 * the same JSON lines in the same order and the same problems, also with many objects at
 * once on fewer threads; a failed download fails with its own error; a reader that stops
 * early frees the thread for the next object. And the committed worker script is what
 * its sources bundle to.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  bundleReadWorker,
  READ_WORKER_MODULE,
  renderedWorkerModule,
} from '../../../scripts/build-workers.ts';
import type { Action } from '../../../shared/job/actions/schema.ts';
import { seededRandom, testSeed } from '../../../test/helpers/random.ts';
import { compileActionChain } from '../actions/chain.ts';
import { ReadPool } from './read-pool.ts';
import { type ActionReport, type ReadTask, readTaskBatches } from './read-task.ts';

const pool = new ReadPool(2);
afterAll(() => pool.close());

function task(name: string, payloadMode: ReadTask['payload']['payloadMode'] = 'auto'): ReadTask {
  return {
    meta: { bucket: 'b', name, generation: '7', size: 0 },
    preprocessors: ['extension'],
    payload: { payloadMode, ignoreLinebreaks: false, maxLineBytes: 200 },
    shape: { fields: { objectName: 'object' } },
  };
}

async function* chunked(bytes: Buffer, random: () => number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(random() * 5000);
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

/** What a reader hands on: its text and problems, in order. */
async function drain(batches: AsyncIterable<{ chunks: Buffer[]; count: number }>) {
  let text = '';
  let count = 0;
  for await (const batch of batches) {
    text += Buffer.concat(batch.chunks).toString();
    count += batch.count;
  }
  return { text, count };
}

async function* linesOf(
  batches: AsyncIterable<{ lines?: { chunks: Buffer[]; count: number } }>,
): AsyncGenerator<{ chunks: Buffer[]; count: number }> {
  for await (const batch of batches) if (batch.lines) yield batch.lines;
}

function randomObject(random: () => number, maxLines = 3000): string {
  const lines: string[] = [];
  const n = Math.floor(random() * maxLines);
  for (let i = 0; i < n; i++) {
    const r = random();
    if (r < 0.8) lines.push(JSON.stringify({ i, s: 'x'.repeat(Math.floor(random() * 40)), ü: r }));
    else if (r < 0.85) lines.push('not json');
    else if (r < 0.9) lines.push(`[1, {"a": ${i}}]`);
    else if (r < 0.95) lines.push(`{"object": "own", "i": ${i}}`);
    else if (r < 0.97)
      lines.push('y'.repeat(300)); // longer than maxLineBytes
    else lines.push('');
  }
  return `${lines.join(random() < 0.5 ? '\n' : '\r\n')}${random() < 0.5 ? '\n' : ''}`;
}

describe('ReadPool', () => {
  it('reads like the main thread: same lines, counts and problems, many objects at once', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const objects = Array.from({ length: 12 }, (_, k) => {
      const text = randomObject(random);
      const gz = random() < 0.6;
      return { name: `o-${k}.json${gz ? '.gz' : ''}`, bytes: gz ? gzipSync(text) : Buffer.from(text) };
    });
    const replay = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`;
    await Promise.all(
      objects.map(async ({ name, bytes }, k) => {
        const mainProblems: string[] = [];
        const poolProblems: string[] = [];
        const here = await drain(
          linesOf(
            readTaskBatches(task(name), chunked(bytes, seededRandom(seed + k)), (reason, detail) =>
              mainProblems.push(`${reason} ${JSON.stringify(detail)}`),
            ),
          ),
        );
        const there = await drain(
          pool.read(task(name), chunked(bytes, seededRandom(seed + k)), (reason, detail) =>
            poolProblems.push(`${reason} ${JSON.stringify(detail)}`),
          ),
        );
        expect(there, `${name}, ${replay}`).toEqual(here);
        expect(poolProblems, `${name}, ${replay}`).toEqual(mainProblems);
      }),
    );
  });

  it('reads a small gzip object inflated whole in every payload mode, also those that keep all of it', async () => {
    const seed = testSeed();
    const text = randomObject(seededRandom(seed), 20_000);
    const bytes = gzipSync(text);
    const replay = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`;
    // `binary` and `ignore-linebreaks` collect the object's pieces and join them after the
    // last: the inflated bytes must still be there then.
    const binary = await drain(pool.read(task('b.json.gz', 'binary'), chunked(bytes, Math.random), () => {}));
    expect(binary.count).toBe(1);
    expect(Buffer.from(JSON.parse(binary.text)._raw, 'base64').toString(), replay).toBe(text);
    const whole: ReadTask = {
      ...task('w.json.gz', 'raw'),
      payload: { ...task('w.json.gz').payload, payloadMode: 'raw', ignoreLinebreaks: true },
    };
    const joined = await drain(pool.read(whole, chunked(bytes, Math.random), () => {}));
    expect(JSON.parse(joined.text)._raw, replay).toBe(text);
  });

  it('reuses the buffers an output released: still the same lines, and released memory is handed back', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    // Up to 30,000 lines: batches of every size, some outgrowing the buffers handed back.
    const objects = Array.from({ length: 8 }, (_, k) => ({
      name: `r-${k}.json.gz`,
      bytes: gzipSync(randomObject(random, 30_000)),
    }));
    const replay = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`;
    for (const [k, { name, bytes }] of objects.entries()) {
      const here = await drain(
        linesOf(readTaskBatches(task(name), chunked(bytes, seededRandom(seed + k)), () => {})),
      );
      let text = '';
      let count = 0;
      for await (const batch of pool.read(task(name), chunked(bytes, seededRandom(seed + k)), () => {})) {
        text += Buffer.concat(batch.chunks).toString();
        count += batch.count;
        expect(batch.release, replay).toBeTypeOf('function');
        batch.release!();
        // The memory went back to the thread (to be filled again): no longer readable here.
        expect(batch.chunks.every((chunk) => chunk.length === 0)).toBe(true);
        batch.release!(); // a second call does nothing
      }
      expect({ text, count }, `${name}, ${replay}`).toEqual(here);
    }
  });

  it('applies a job’s actions in the thread: the same lines, counts and errors as on the main thread', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const actions = [
      { filter: 'has(event.i) && int(event.i) % 3 != 0' },
      { set: { 'deep.half': 'event.i / 2.0', tag: '"t-" + string(event.i)' } },
      { remove: ['s'] },
      { rename: { ü: 'u' } },
    ] as Action[];
    const names = { job: 'j', worker: 'w' };
    const withActions = (name: string): ReadTask => ({ ...task(name), actions: { list: actions, ...names } });
    const text = randomObject(random);
    const bytes = gzipSync(text);
    // Each side's reports go into a chain of its own, as the gcs input's chain takes them.
    const counted = () => {
      const chain = compileActionChain(actions);
      const failures: string[] = [];
      return {
        chain,
        failures,
        take: (report: ActionReport) => {
          chain.absorb(report.stats, []);
          failures.push(...report.failures.map((f) => JSON.stringify(f)));
        },
      };
    };
    const mainSide = counted();
    const poolSide = counted();
    const here = await drain(
      linesOf(
        (async function* () {
          for await (const batch of readTaskBatches(
            withActions('a.json.gz'),
            chunked(bytes, seededRandom(seed)),
            () => {},
          )) {
            if (batch.actions) mainSide.take(batch.actions);
            yield batch;
          }
        })(),
      ),
    );
    const there = await drain(
      pool.read(withActions('a.json.gz'), chunked(bytes, seededRandom(seed)), () => {}, poolSide.take),
    );
    const replay = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`;
    expect(there, replay).toEqual(here);
    expect(there.count, replay).toBeGreaterThan(0);
    expect(poolSide.chain.takeStats(), replay).toEqual(mainSide.chain.takeStats());
    expect(poolSide.failures, replay).toEqual(mainSide.failures);
  });

  it('fails with the download’s own error, and goes on reading other objects', async () => {
    const failure = Object.assign(new Error('HTTP 503 from storage'), { code: 503 });
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"a":1}\n{"a":2}\n');
      throw failure;
    }
    await expect(drain(pool.read(task('f.json'), failing(), () => {}))).rejects.toBe(failure);
    const ok = await drain(
      pool.read(task('g.json'), chunked(Buffer.from('{"b":1}\n'), Math.random), () => {}),
    );
    expect(ok).toEqual({ text: '{"b":1,"object":"g.json"}\n', count: 1 });
  });

  it('stops reading an object its reader gave up on, and frees its thread', async () => {
    let pulled = 0;
    const line = `${JSON.stringify({ pad: 'p'.repeat(100) })}\n`;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        pulled++;
        yield Buffer.from(line.repeat(1000));
      }
    }
    for await (const batch of pool.read(task('endless.json'), endless(), () => {})) {
      expect(batch.count).toBeGreaterThan(0);
      break;
    }
    const afterStop = pulled;
    const next = await drain(
      pool.read(task('next.json'), chunked(Buffer.from('{"c":1}\n'), Math.random), () => {}),
    );
    expect(next.count).toBe(1);
    // Bounded read-ahead: the worker asked for a few chunks, not the endless object.
    expect(afterStop).toBeLessThan(20);
    expect(pulled).toBe(afterStop);
  });

  it('gives objects started at the same moment to different threads', async () => {
    // Three threads: tasks without actions use two of them (threadsFor).
    const spread = new ReadPool(3);
    try {
      const line = `${JSON.stringify({ pad: 'p'.repeat(100) })}\n`;
      async function* endless(): AsyncGenerator<Buffer> {
        for (;;) yield Buffer.from(line.repeat(1000));
      }
      // Twice: as the threads start, and again once both are there and idle.
      for (const round of [1, 2]) {
        const a = spread.read(task('a.json'), endless(), () => {});
        const b = spread.read(task('b.json'), endless(), () => {});
        // Both asked for at once, as the gcs input starts its first objects.
        await Promise.all([a.next(), b.next()]);
        // Each still at work (a thread hands back a few batches ahead, then waits).
        expect(spread.workingPerThread, `round ${round}`).toEqual([1, 1]);
        await Promise.all([a.return(undefined), b.return(undefined)]);
        expect(spread.workingPerThread, `round ${round}`).toEqual([0, 0]);
      }
    } finally {
      await spread.close();
    }
  });

  it('leaves a core to the main thread for objects without actions, and uses every core for those with actions', async () => {
    const two = new ReadPool(2);
    const line = `${JSON.stringify({ i: 1, pad: 'p'.repeat(100) })}\n`;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) yield Buffer.from(line.repeat(1000));
    }
    const withActions = (name: string): ReadTask => ({
      ...task(name),
      actions: { list: [{ set: { seen: 'true' } }] as Action[], job: 'j', worker: 'w' },
    });
    try {
      const light = ['a', 'b', 'c'].map((name) => two.read(task(`${name}.json`), endless(), () => {}));
      await Promise.all(light.map((read) => read.next()));
      expect(two.threadsFor(task('a.json'))).toBe(1);
      expect(two.workingPerThread).toEqual([3]);
      const heavy = ['d', 'e'].map((name) => two.read(withActions(`${name}.json`), endless(), () => {}));
      await Promise.all(heavy.map((read) => read.next()));
      // Both with actions on the second thread, the one with less at work.
      expect(two.workingPerThread).toEqual([3, 2]);
      await Promise.all([...light, ...heavy].map((read) => read.return(undefined)));
    } finally {
      await two.close();
    }
  });

  it('lets a thread with nothing to read go, and starts one again for the next object', async () => {
    const brief = new ReadPool(1, { idleMs: 50 });
    try {
      const first = await drain(
        brief.read(task('h.json'), chunked(Buffer.from('{"h":1}\n'), Math.random), () => {}),
      );
      expect(first.count).toBe(1);
      const deadline = Date.now() + 5_000;
      while (brief.threads > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(brief.threads).toBe(0);
      const second = await drain(
        brief.read(task('i.json'), chunked(Buffer.from('{"i":2}\n'), Math.random), () => {}),
      );
      expect(second).toEqual({ text: '{"i":2,"object":"i.json"}\n', count: 1 });
    } finally {
      await brief.close();
    }
  });

  it('starts a thread with its core alone: the actions code comes with the first task that has actions', async () => {
    const { READ_WORKER_SOURCE, READ_WORKER_PARTS } = await import('./read-worker.generated.ts');
    // What every thread parses at start: tens of KB, not the 0.9 MB with its parts.
    expect(READ_WORKER_SOURCE.length).toBeLessThan(100_000);
    expect(READ_WORKER_PARTS.parquet.length + READ_WORKER_PARTS.actions.length).toBeGreaterThan(500_000);
    const one = new ReadPool(1);
    const actions = [{ filter: 'int(event.i) != 2' }, { set: { seen: 'true' } }] as Action[];
    const withActions = (name: string): ReadTask => ({
      ...task(name),
      actions: { list: actions, job: 'j', worker: 'w' },
    });
    const bytes = Buffer.from('{"i":1}\n{"i":2}\n{"i":3}\n');
    try {
      expect(await drain(one.read(task('a.json'), chunked(bytes, Math.random), () => {}))).toEqual({
        text: '{"i":1,"object":"a.json"}\n{"i":2,"object":"a.json"}\n{"i":3,"object":"a.json"}\n',
        count: 3,
      });
      // The same thread, now with the part; a second task finds it loaded.
      for (const name of ['b.json', 'c.json']) {
        const read = await drain(one.read(withActions(name), chunked(bytes, Math.random), () => {}));
        expect(read.count).toBe(2);
        expect(
          read.text
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        ).toEqual([
          { i: 1, object: name, seen: true },
          { i: 3, object: name, seen: true },
        ]);
      }
      expect(one.threads).toBe(1);
    } finally {
      await one.close();
    }
  });

  it('is what read-worker.ts bundles to (run `npm run build:workers` after changing what it imports)', async () => {
    expect(readFileSync(READ_WORKER_MODULE, 'utf8')).toBe(renderedWorkerModule(await bundleReadWorker()));
  });
});
