/**
 * InOrder: objects read ahead of their turn hold their batches until the objects before
 * them are done, and together hold no more than its cap, in events or in bytes: past the
 * cap, a read that is not the head's waits for its turn too.
 */
import { describe, expect, it } from 'vitest';
import { InOrder } from './in-order.ts';

/** Adds two batches of `size` to a turn behind a head turn, and says in what order things happened. */
async function secondAddAgainstHeadDone(size: { events: number; bytes: number }) {
  const order = new InOrder({ events: 100, bytes: 1000 });
  const head = order.enter<string>();
  const behind = order.enter<string>();
  const seen: string[] = [];
  const deliver = async (batch: string) => {
    seen.push(`delivered ${batch}`);
  };
  await behind.add('b1', size, deliver);
  const second = behind.add('b2', size, deliver).then(() => seen.push('second add returned'));
  await Promise.resolve();
  seen.push('head done');
  head.done();
  await second;
  return seen;
}

describe('InOrder', () => {
  it('lets a read ahead of its turn go on while what it holds is under both caps', async () => {
    expect(await secondAddAgainstHeadDone({ events: 10, bytes: 100 })).toEqual([
      'second add returned',
      'head done',
    ]);
  });

  it('holds a read ahead of its turn once the bytes it keeps reach the cap, however few the events', async () => {
    expect(await secondAddAgainstHeadDone({ events: 1, bytes: 600 })).toEqual([
      'head done',
      'delivered b1',
      'delivered b2',
      'second add returned',
    ]);
  });

  it('holds it once the events it keeps reach the cap', async () => {
    expect(await secondAddAgainstHeadDone({ events: 60, bytes: 0 })).toEqual([
      'head done',
      'delivered b1',
      'delivered b2',
      'second add returned',
    ]);
  });
});
