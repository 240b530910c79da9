/**
 * When a job's input runs (the seed's Trigger object): once without a trigger; every
 * `interval.duration`; on a `cron` schedule (optionally at once first). A random offset is
 * chosen once per job and kept. With a `window`, each run covers the next `size` of time
 * ending `offset` before now; the high-watermark advances only after the run delivered
 * everything (not after a failed or stopped run, so that window is read again), and a
 * runner that fell behind catches up window by window. A failed run of a triggered job
 * goes to `onError` and the trigger carries on; without a trigger the error is thrown.
 */
import { Cron } from 'croner';
import { parseDuration } from '../../shared/duration.ts';
import { matchesMessageFilter } from '../../shared/events/filter.ts';
import type { Trigger } from '../../shared/job/schema.ts';
import { parseStartTime } from '../../shared/time-format.ts';
import { pause } from './sleep.ts';
import type { MessageSource, RunWindow, WatermarkStore } from './types.ts';

type Window = NonNullable<NonNullable<Trigger['interval']>['window']>;

export interface TriggerContext {
  job: string;
  signal: AbortSignal;
  watermarks: WatermarkStore;
  /** Where `message` triggers listen; absent for `sluice job run`. */
  messages?: MessageSource;
  /** A triggered run failed (not called for runs cut short by `signal`). */
  onError?: (err: Error) => void;
  now?: () => number;
}

export async function runOnTrigger(
  trigger: Trigger | undefined,
  runOnce: (window?: RunWindow) => Promise<void>,
  ctx: TriggerContext,
): Promise<void> {
  if (!trigger) return await runOnce();
  if (trigger.message) return await runOnMessages(trigger.message, runOnce, ctx);
  const spec = trigger.interval ?? trigger.cron!;
  const offsetMs = await randomOffset(ctx, parseDuration(spec['random-offset']));
  const runWindows = () =>
    attempt(ctx, () => (spec.window ? runDueWindows(spec.window, runOnce, ctx) : runOnce()));

  if (trigger.interval) {
    const every = parseDuration(trigger.interval.duration);
    await pause(offsetMs, ctx.signal);
    while (!ctx.signal.aborted) {
      await runWindows();
      await pause(every, ctx.signal);
    }
    return;
  }
  const cron = new Cron(trigger.cron!.cron, { paused: true });
  try {
    if (trigger.cron!.immediate) await runWindows();
    // Scheduled times follow one another (a long offset must not skip beats); a runner
    // that fell behind runs once at the latest missed time rather than once per miss.
    let last = Date.now();
    while (!ctx.signal.aborted) {
      const next = cron.nextRun(new Date(Math.max(last, Date.now() - offsetMs)));
      if (!next) return;
      last = next.getTime();
      await pause(last + offsetMs - Date.now(), ctx.signal);
      if (!ctx.signal.aborted) await runWindows();
    }
  } finally {
    cron.stop();
  }
}

/** Runs once per matching message, up to `limit` runs, one run at a time. */
async function runOnMessages(
  filter: NonNullable<Trigger['message']>,
  runOnce: (window?: RunWindow) => Promise<void>,
  ctx: TriggerContext,
): Promise<void> {
  if (!ctx.messages) {
    throw new Error(
      'message triggers run on a worker connected to a control plane (sluice worker run), not with sluice job run',
    );
  }
  let pending = 0;
  let wake: (() => void) | undefined;
  const unsubscribe = ctx.messages.subscribe((message) => {
    if (!matchesMessageFilter(filter, message)) return;
    pending++;
    wake?.();
  });
  try {
    let runs = 0;
    while (!ctx.signal.aborted && (filter.limit === undefined || runs < filter.limit)) {
      if (pending === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        wake = undefined;
        continue;
      }
      pending--;
      runs++;
      await attempt(ctx, () => runOnce());
    }
  } finally {
    unsubscribe();
  }
}

/**
 * Runs every complete window between the watermark and now; advances the watermark after
 * each. Also used by the scheduled tick, which decides on its own when a job is due.
 */
export async function runDueWindows(
  window: Window,
  runOnce: (window?: RunWindow) => Promise<void>,
  ctx: Pick<TriggerContext, 'job' | 'signal' | 'watermarks' | 'now'>,
): Promise<void> {
  const now = ctx.now ?? Date.now;
  const size = parseDuration(window.size);
  const lag = parseDuration(window.offset);
  const name = window.start?.['start-time']?.['highwatermark-file'] ?? window.start?.tracked ?? 'window-end';
  const stored = await ctx.watermarks.get(ctx.job, name);
  let start = stored
    ? Date.parse(stored)
    : window.start?.['start-time']
      ? parseStartTime(window.start['start-time']['start-time']).getTime()
      : now() - lag - size;
  while (!ctx.signal.aborted && start + size <= now() - lag) {
    const current = { start: new Date(start), end: new Date(start + size) };
    await runOnce(current);
    if (ctx.signal.aborted) return; // the run may have stopped part way through the window
    start += size;
    await ctx.watermarks.set(ctx.job, name, new Date(start).toISOString());
  }
}

async function attempt(ctx: TriggerContext, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!ctx.signal.aborted) ctx.onError?.(err as Error);
  }
}

/** The job's random offset: chosen once, then kept with its watermarks. */
export async function randomOffset(
  ctx: Pick<TriggerContext, 'job' | 'watermarks'>,
  maxMs: number,
): Promise<number> {
  if (maxMs <= 0) return 0;
  const kept = await ctx.watermarks.get(ctx.job, 'random-offset-ms');
  if (kept !== undefined) return Number(kept);
  const chosen = Math.floor(Math.random() * maxMs);
  await ctx.watermarks.set(ctx.job, 'random-offset-ms', String(chosen));
  return chosen;
}
