import { describe, expect, it } from 'vitest';
import { prefetch } from './prefetch.ts';

/** A source that records how far it was read and whether it was closed. */
function source(count: number, failAt?: number) {
  const state = { produced: 0, closed: false, concurrent: 0, maxConcurrent: 0 };
  const iterable: AsyncIterable<number> = {
    [Symbol.asyncIterator]() {
      return {
        async next() {
          state.concurrent++;
          state.maxConcurrent = Math.max(state.maxConcurrent, state.concurrent);
          await new Promise((resolve) => setTimeout(resolve, 1));
          state.concurrent--;
          if (state.produced === failAt) throw new Error(`page ${failAt} failed`);
          if (state.produced >= count) return { done: true, value: undefined };
          return { done: false, value: state.produced++ };
        },
        async return() {
          state.closed = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { iterable, state };
}

describe('prefetch', () => {
  it('keeps the order and never reads more than `ahead` items past the one being consumed', async () => {
    for (const ahead of [1, 2, 3]) {
      const { iterable, state } = source(20);
      const seen: number[] = [];
      for await (const item of prefetch(iterable, ahead)) {
        // Give the prefetcher every chance to run further ahead than it may.
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(state.produced - item - 1).toBeLessThanOrEqual(ahead);
        seen.push(item);
      }
      expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(state.maxConcurrent).toBe(1);
    }
  });

  it('reads ahead while the consumer works', async () => {
    const { iterable, state } = source(5);
    const iterator = prefetch(iterable, 1)[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(state.produced).toBe(2);
    await iterator.return(undefined);
  });

  it('delivers the items before a failure, then the failure', async () => {
    const { iterable } = source(10, 3);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const item of prefetch(iterable, 2)) seen.push(item);
      })(),
    ).rejects.toThrow('page 3 failed');
    expect(seen).toEqual([0, 1, 2]);
  });

  it('closes the source when the consumer stops early', async () => {
    const { iterable, state } = source(100);
    for await (const item of prefetch(iterable, 1)) if (item === 2) break;
    expect(state.closed).toBe(true);
    expect(state.produced).toBeLessThanOrEqual(4);
  });
});
