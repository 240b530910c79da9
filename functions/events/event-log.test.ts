import { describe, expect, it } from 'vitest';
import { buildEvent } from './event-log.ts';

describe('event ids', () => {
  it('order events made in the same millisecond as they were made, and follow the time', () => {
    const at = new Date('2026-11-20T10:00:00.123Z');
    const made = Array.from({ length: 50 }, () =>
      buildEvent({ type: 'heart-beat', source: 'worker', payload: {} }, at),
    );
    expect(made.map((e) => e.id)).toEqual(made.map((e) => e.id).sort());
    expect(new Set(made.map((e) => e.id)).size).toBe(50);
    expect(made[0]!.id.startsWith('20261120100000123-')).toBe(true);
    const later = buildEvent(
      { type: 'heart-beat', source: 'worker', payload: {} },
      new Date('2026-11-20T10:00:00.124Z'),
    );
    expect(later.id > made[49]!.id).toBe(true);
  });

  it('never run backwards within a process when the clock does', () => {
    const first = buildEvent(
      { type: 'heart-beat', source: 'worker', payload: {} },
      new Date('2026-11-21T10:00:00Z'),
    );
    const earlier = buildEvent(
      { type: 'heart-beat', source: 'worker', payload: {} },
      new Date('2026-11-21T09:59:59Z'),
    );
    expect(earlier.id > first.id).toBe(true);
    expect(earlier.time).toBe('2026-11-21T09:59:59.000Z');
  });
});
