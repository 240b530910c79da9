import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runOnTrigger, type TriggerContext } from '../../functions/runner/triggers.ts';
import type { MessageSource, RunWindow } from '../../functions/runner/types.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import type { Trigger } from '../../shared/job/schema.ts';
import { validateJob } from '../../shared/job/validate.ts';
import { memoryWatermarks } from '../gcs/helpers.ts';

/**
 * A trigger as the rendered job schema gives it (defaults filled in), on a gcs input: the
 * input kind that takes a `window` (http-poll refuses one).
 */
function trigger(value: unknown): Trigger {
  const gcs = {
    'bucket-name': 'trigger-bucket',
    credentials: { 'storage-url': 'gs://trigger-bucket' },
    'object-names': [],
    'timestamp-mode': 'last-modified',
    trigger: value,
  };
  const result = validateJob({ name: 't', input: { gcs }, output: { print: {} } }, { level: 'rendered' });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.job.input.gcs!.trigger!;
}

function context(overrides: Partial<TriggerContext> = {}) {
  const controller = new AbortController();
  const stores = fileStores(mkdtempSync(join(tmpdir(), 'sluice-triggers-')));
  return {
    controller,
    ctx: { job: 't', signal: controller.signal, watermarks: stores.watermarks, ...overrides },
  };
}

describe('triggers', () => {
  it('runs once without a trigger', async () => {
    let runs = 0;
    await runOnTrigger(undefined, async () => void runs++, context().ctx);
    expect(runs).toBe(1);
  });

  it('runs on an interval, keeping the random offset chosen the first time', async () => {
    const { ctx, controller } = context();
    const t = trigger({ interval: { duration: '50ms', 'random-offset': '300ms' } });
    const started = Date.now();
    const firstRunAt: number[] = [];
    let runs = 0;
    const done = runOnTrigger(
      t,
      async () => {
        if (++runs === 1) firstRunAt.push(Date.now() - started);
        if (runs === 3) controller.abort();
      },
      ctx,
    );
    await done;
    expect(runs).toBe(3);
    const kept = Number(await ctx.watermarks.get('t', 'random-offset-ms'));
    expect(kept).toBeGreaterThanOrEqual(0);
    expect(kept).toBeLessThan(300);
    expect(firstRunAt[0]).toBeGreaterThanOrEqual(kept - 5);

    // A restart waits the same offset, not a new one.
    await ctx.watermarks.set('t', 'random-offset-ms', '250');
    const again = context({ watermarks: ctx.watermarks });
    const restartedAt = Date.now();
    let waited = 0;
    await runOnTrigger(
      t,
      async () => {
        waited = Date.now() - restartedAt;
        again.controller.abort();
      },
      again.ctx,
    );
    expect(waited).toBeGreaterThanOrEqual(245);
    expect(await ctx.watermarks.get('t', 'random-offset-ms')).toBe('250');
  });

  it('runs a cron schedule, at once first only with immediate', async () => {
    // An injected clock: the first run's time is exact, whatever the machine's load.
    const start = Date.parse('2026-01-01T12:00:00.300Z');
    vi.useFakeTimers({ now: start });
    try {
      for (const immediate of [true, false]) {
        vi.setSystemTime(start);
        const { ctx, controller } = context();
        let firstAt: number | undefined;
        const done = runOnTrigger(
          trigger({ cron: { cron: '* * * * * *', immediate } }),
          async () => {
            firstAt = Date.now();
            controller.abort();
          },
          ctx,
        );
        await vi.advanceTimersByTimeAsync(2_000);
        await done;
        // Without immediate, the first run waits for the next whole second of the schedule.
        expect(new Date(firstAt!).toISOString()).toBe(
          immediate ? '2026-01-01T12:00:00.300Z' : '2026-01-01T12:00:01.000Z',
        );
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps the cron beat under a random offset longer than the period', async () => {
    // An injected clock and a store in memory: no file I/O runs behind the fake clock's back,
    // so the beat is exact whatever the machine's load.
    const { ctx, controller } = context({ watermarks: memoryWatermarks() });
    await ctx.watermarks.set('t', 'random-offset-ms', '1500');
    vi.useFakeTimers({ now: Date.parse('2026-01-01T12:00:00.200Z') });
    try {
      const at: number[] = [];
      let finished = false;
      const done = runOnTrigger(
        trigger({ cron: { cron: '* * * * * *', 'random-offset': '2s' } }),
        async () => {
          if (at.push(Date.now()) === 3) controller.abort();
        },
        ctx,
      ).finally(() => {
        finished = true;
      });
      for (let step = 0; !finished && step < 400; step++) await vi.advanceTimersByTimeAsync(25);
      controller.abort();
      await done;
      // Every second, half a second past the second (1.5 s after each scheduled time).
      expect(at.map((time) => new Date(time).toISOString())).toEqual([
        '2026-01-01T12:00:02.500Z',
        '2026-01-01T12:00:03.500Z',
        '2026-01-01T12:00:04.500Z',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands each run the next window and catches up window by window from the watermark', async () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const { ctx, controller } = context({ now: () => now });
    await ctx.watermarks.set('t', 'window-end', '2026-01-01T08:00:00.000Z');
    const windows: RunWindow[] = [];
    await runOnTrigger(
      trigger({ interval: { duration: '1h', window: { size: '1h', offset: '1h' } } }),
      async (window) => {
        windows.push(window!);
        if (windows.length === 3) setTimeout(() => controller.abort(), 0);
      },
      ctx,
    );
    expect(windows.map((w) => [w.start.toISOString(), w.end.toISOString()])).toEqual([
      ['2026-01-01T08:00:00.000Z', '2026-01-01T09:00:00.000Z'],
      ['2026-01-01T09:00:00.000Z', '2026-01-01T10:00:00.000Z'],
      ['2026-01-01T10:00:00.000Z', '2026-01-01T11:00:00.000Z'],
    ]);
    expect(await ctx.watermarks.get('t', 'window-end')).toBe('2026-01-01T11:00:00.000Z');
  });

  it('starts a fresh window at now - offset - size, or at start-time, under its high-watermark file name', async () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const { ctx, controller } = context({ now: () => now });
    const windows: RunWindow[] = [];
    await runOnTrigger(
      trigger({
        interval: {
          duration: '1h',
          window: {
            size: '1h',
            start: {
              'start-time': {
                'start-time': '2026-01-01 10:00:00.000 +0000',
                'highwatermark-file': 'hw.json',
              },
            },
          },
        },
      }),
      async (window) => {
        if (windows.push(window!) === 2) setTimeout(() => controller.abort(), 0);
      },
      ctx,
    );
    expect(windows.map((w) => w.start.toISOString())).toEqual([
      '2026-01-01T10:00:00.000Z',
      '2026-01-01T11:00:00.000Z',
    ]);
    expect(await ctx.watermarks.get('t', 'hw.json')).toBe('2026-01-01T12:00:00.000Z');
  });

  it('does not advance the watermark past a window whose run failed or was stopped', async () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const errors: string[] = [];
    const controller = new AbortController();
    const { ctx } = context({
      now: () => now,
      signal: controller.signal,
      onError: (err) => {
        errors.push(err.message);
        controller.abort();
      },
    });
    await ctx.watermarks.set('t', 'window-end', '2026-01-01T10:00:00.000Z');
    const t = trigger({ interval: { duration: '1h', window: { size: '1h' } } });
    await runOnTrigger(
      t,
      async () => {
        throw new Error('bucket unreachable');
      },
      ctx,
    );
    expect(errors).toEqual(['bucket unreachable']);
    expect(await ctx.watermarks.get('t', 'window-end')).toBe('2026-01-01T10:00:00.000Z');

    // Stopped in the middle of a window (shutdown, redeploy): the window is read again next time.
    const stopped = context({ now: () => now, watermarks: ctx.watermarks });
    await runOnTrigger(t, async () => stopped.controller.abort(), stopped.ctx);
    expect(await ctx.watermarks.get('t', 'window-end')).toBe('2026-01-01T10:00:00.000Z');
  });

  it('runs once per matching message, up to limit, without losing messages that arrive during a run', async () => {
    const listeners = new Set<(m: SluiceEvent) => void>();
    const source: MessageSource = {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const send = (type: string, tags: string[]) => {
      const message = {
        id: type,
        type,
        kind: type.startsWith('user-') ? 'user' : 'system',
        source: 'server',
        tags,
        time: new Date().toISOString(),
        payload: {},
      } as unknown as SluiceEvent;
      for (const l of listeners) l(message);
    };
    const { ctx } = context({ messages: source });
    let runs = 0;
    const done = runOnTrigger(
      trigger({ message: { 'filter-type': ['user-generated'], 'filter-tag': 'go', limit: 2 } }),
      async () => {
        runs++;
        // Two matching messages arrive while the first run is busy.
        if (runs === 1) {
          send('user-generated', ['go']);
          send('user-generated', ['go']);
        }
        await new Promise((r) => setTimeout(r, 20));
      },
      ctx,
    );
    send('user-generated', ['other']);
    send('user-alert', ['go']);
    // A matching message would start a run within the microtasks that follow its delivery
    // (the trigger loop waits on no timer): once they have all run, no run means no match.
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(0);
    send('user-generated', ['go', 'x']);
    await done; // the limit ends the trigger
    expect(runs).toBe(2);
    expect(listeners.size).toBe(0);
  });
});
