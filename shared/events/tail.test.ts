import { describe, expect, it } from 'vitest';
import { EventTail } from './tail.ts';

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, seconds)).toISOString();
const event = (id: string, seconds: number) => ({ id, time: at(seconds) });

describe('EventTail', () => {
  it('reads again from the settle time before the newest event, never before the start', () => {
    const tail = new EventTail(new Date(at(0)), 5_000);
    expect(tail.since()).toBe(at(0));
    tail.fresh([event('a', 3)]);
    expect(tail.since()).toBe(at(0));
    tail.fresh([event('b', 20)]);
    expect(tail.since()).toBe(at(15));
  });

  it('shows each event once, and one that arrives late behind the newest', () => {
    const tail = new EventTail(new Date(at(0)), 5_000);
    expect(tail.fresh([event('a', 1), event('b', 2)]).map((e) => e.id)).toEqual(['a', 'b']);
    // The next poll reads the window again: `c` committed late, its time before `b`'s.
    expect(tail.fresh([event('a', 1), event('c', 1.5), event('b', 2)]).map((e) => e.id)).toEqual(['c']);
    expect(
      tail.fresh([event('a', 1), event('c', 1.5), event('b', 2), event('d', 3)]).map((e) => e.id),
    ).toEqual(['d']);
  });

  it('forgets what the window no longer reaches', () => {
    const tail = new EventTail(new Date(at(0)), 5_000);
    tail.fresh([event('a', 1)]);
    tail.fresh([event('b', 30)]);
    // `a` is out of every later window; were it read again (a clock far behind), it shows again.
    expect(tail.fresh([event('a', 1)]).map((e) => e.id)).toEqual(['a']);
    expect(tail.fresh([event('b', 30)])).toEqual([]);
  });
});
