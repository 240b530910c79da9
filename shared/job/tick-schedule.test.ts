import { describe, expect, it } from 'vitest';
import { seededRandom, testSeed } from '../../test/helpers/random.ts';
import type { Trigger } from './schema.ts';
import { afterTickRun, dueOnTick, nextDueMs, type TickState } from './tick-schedule.ts';

const at = (iso: string) => Date.parse(iso);
const clock = (iso: string, offsetMs = 0, version = '1') => ({ nowMs: at(iso), offsetMs, version });
const hourly: Trigger = { cron: { cron: '0 * * * *', immediate: false, 'random-offset': '0s' } };
const ran = (trigger: Trigger | undefined, state: TickState, from: string, to: string, offsetMs = 0) =>
  afterTickRun(trigger, state, {
    startedMs: at(from),
    endedMs: at(to),
    offsetMs,
    version: '1',
    completed: true,
  });

describe('dueOnTick', () => {
  it('runs a trigger-less job once per deployed version', () => {
    expect(dueOnTick(undefined, {}, clock('2026-11-20T10:00:00Z'))).toBe(true);
    const state = ran(undefined, {}, '2026-11-20T10:00:00Z', '2026-11-20T10:00:05Z');
    expect(dueOnTick(undefined, state, clock('2026-11-20T11:00:00Z'))).toBe(false);
    expect(dueOnTick(undefined, state, clock('2026-11-20T11:00:00Z', 0, '2'))).toBe(true);
  });

  it('waits for the first cron beat after the job was first seen, then runs once per beat', () => {
    const seen: TickState = { first_seen_ms: at('2026-11-20T10:20:00Z') };
    expect(dueOnTick(hourly, seen, clock('2026-11-20T10:59:59Z'))).toBe(false);
    expect(dueOnTick(hourly, seen, clock('2026-11-20T11:00:03Z'))).toBe(true);
    const after = ran(hourly, seen, '2026-11-20T11:00:03Z', '2026-11-20T11:00:09Z');
    expect(dueOnTick(hourly, after, clock('2026-11-20T11:30:00Z'))).toBe(false);
    expect(dueOnTick(hourly, after, clock('2026-11-20T12:00:01Z'))).toBe(true);
  });

  it('runs once, not once per beat, after missing several beats', () => {
    const seen: TickState = { first_seen_ms: at('2026-11-20T10:20:00Z') };
    const after = ran(hourly, seen, '2026-11-20T15:10:00Z', '2026-11-20T15:10:30Z');
    expect(dueOnTick(hourly, after, clock('2026-11-20T15:20:00Z'))).toBe(false);
    expect(dueOnTick(hourly, after, clock('2026-11-20T16:00:00Z'))).toBe(true);
  });

  it('runs a cron job with immediate at once on the first tick', () => {
    const immediate: Trigger = { cron: { ...hourly.cron!, immediate: true } };
    expect(
      dueOnTick(immediate, { first_seen_ms: at('2026-11-20T10:20:00Z') }, clock('2026-11-20T10:20:00Z')),
    ).toBe(true);
    const after = ran(immediate, {}, '2026-11-20T10:20:00Z', '2026-11-20T10:20:01Z');
    expect(dueOnTick(immediate, after, clock('2026-11-20T10:40:00Z'))).toBe(false);
  });

  it('delays each cron beat by the kept random offset', () => {
    const seen: TickState = { first_seen_ms: at('2026-11-20T10:20:00Z') };
    const offset = 7 * 60_000;
    expect(dueOnTick(hourly, seen, clock('2026-11-20T11:05:00Z', offset))).toBe(false);
    expect(dueOnTick(hourly, seen, clock('2026-11-20T11:07:00Z', offset))).toBe(true);
    const after = ran(hourly, seen, '2026-11-20T11:07:00Z', '2026-11-20T11:07:30Z', offset);
    expect(dueOnTick(hourly, after, clock('2026-11-20T12:06:00Z', offset))).toBe(false);
    expect(dueOnTick(hourly, after, clock('2026-11-20T12:07:00Z', offset))).toBe(true);
  });

  it('runs an interval job the random offset after it was first seen, then duration after each run', () => {
    const every: Trigger = { interval: { duration: '10m', 'random-offset': '5m' } };
    const seen: TickState = { first_seen_ms: at('2026-11-20T10:00:00Z') };
    expect(dueOnTick(every, seen, clock('2026-11-20T10:02:00Z', 180_000))).toBe(false);
    expect(dueOnTick(every, seen, clock('2026-11-20T10:03:00Z', 180_000))).toBe(true);
    const after = ran(every, seen, '2026-11-20T10:03:00Z', '2026-11-20T10:04:00Z', 180_000);
    expect(dueOnTick(every, after, clock('2026-11-20T10:13:59Z', 180_000))).toBe(false);
    expect(dueOnTick(every, after, clock('2026-11-20T10:14:00Z', 180_000))).toBe(true);
  });

  it('carries on a run the deadline cut short at once, and the beats during it are still owed', () => {
    const seen: TickState = { first_seen_ms: at('2026-11-20T10:20:00Z') };
    const cut = afterTickRun(hourly, seen, {
      startedMs: at('2026-11-20T11:00:00Z'),
      endedMs: at('2026-11-20T11:09:00Z'),
      offsetMs: 0,
      version: '1',
      completed: false,
    });
    expect(dueOnTick(hourly, cut, clock('2026-11-20T11:09:05Z'))).toBe(true);
    // The continuation finishes after the 12:00 beat: that beat still gets its own run.
    const finished = ran(hourly, cut, '2026-11-20T11:59:00Z', '2026-11-20T12:03:00Z');
    expect(dueOnTick(hourly, finished, clock('2026-11-20T12:03:05Z'))).toBe(true);
  });

  it('never runs message-triggered jobs (the cloud worker receives no messages)', () => {
    expect(dueOnTick({ message: {} } as Trigger, {}, clock('2026-11-20T10:00:00Z'))).toBe(false);
  });
});

describe('nextDueMs', () => {
  it('is the first moment dueOnTick says yes, for random triggers, states and times (seeded)', () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const base = at('2026-11-20T10:00:00Z');
    const minutes = (n: number) => n * 60_000;
    const triggers: (Trigger | undefined)[] = [
      undefined,
      { interval: { duration: '10m', 'random-offset': '0s' } },
      { interval: { duration: '1h', 'random-offset': '0s' } },
      hourly,
      { cron: { cron: '*/15 * * * *', immediate: true, 'random-offset': '0s' } },
      { message: { filter: {}, limit: 1 } } as unknown as Trigger,
    ];
    for (let round = 0; round < 500; round++) {
      const trigger = pick(triggers);
      const state: TickState = { first_seen_ms: base + minutes(Math.floor(random() * 60)) };
      if (random() < 0.5) state.last_run_ended_ms = base + minutes(Math.floor(random() * 120));
      if (random() < 0.5) state.beats_done_until_ms = base + minutes(Math.floor(random() * 120));
      if (random() < 0.3) state.completed_version = pick(['1', '2']);
      if (random() < 0.1) state.interrupted = true;
      const offsetMs = pick([0, minutes(7)]);
      const version = pick(['1', '2']);
      const next = nextDueMs(trigger, state, { offsetMs, version, firstSeenMs: base });
      for (let probe = 0; probe < 8; probe++) {
        const nowMs = base + minutes(Math.floor(random() * 300));
        const due = dueOnTick(trigger, state, { nowMs, offsetMs, version });
        expect(
          next !== null && nowMs >= next,
          `seed ${seed} round ${round}: ${JSON.stringify({ trigger, state, offsetMs, version, nowMs, next })}`,
        ).toBe(due);
      }
    }
  });
});
