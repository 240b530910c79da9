/**
 * When a job is due on a scheduler that only wakes up now and then (the `cloud` worker's
 * tick: Cloud Scheduler in the cloud, a timer in the local stack), and what to remember
 * after its run. A long-running worker sleeps until its trigger fires
 * (`functions/runner/triggers.ts`); a tick cannot sleep, so it asks this instead, with the
 * state the previous ticks left behind. The rules match the long-running runner:
 *
 * - no trigger: runs until one run completes for the deployed version;
 * - `interval`: the first run `random-offset` after the job was first seen, then
 *   `duration` after the end of the previous run;
 * - `cron`: on the first beat after the job was first seen (at once with `immediate`),
 *   each beat `random-offset` late; a tick that missed several beats runs once;
 * - `message`: never (the cloud worker receives no messages; deploying one is refused);
 * - a run cut short by the tick's deadline is due again at once, so it carries on.
 *
 * `nextDueMs` says when `dueOnTick` turns true, so that a tick can skip a job without
 * reading anything of it until then (the `cloud` worker keeps it beside the deployment).
 *
 * @example
 *   const due = dueOnTick(trigger, state, { nowMs: startedMs, offsetMs: 0, version: '3' });
 *   if (due) save(afterTickRun(trigger, state, { startedMs, endedMs: Date.now(), offsetMs: 0, version: '3', completed: true }));
 */
import { Cron } from 'croner';
import { parseDuration } from '../duration.ts';
import type { Trigger } from './schema.ts';

/** What the scheduler keeps per job between ticks. */
export interface TickState {
  /** When a tick first saw the job: the reference of its first `interval` or `cron` run. */
  first_seen_ms?: number;
  last_run_ended_ms?: number;
  /** Cron beats up to this time have been run. */
  beats_done_until_ms?: number;
  /** The version of the last run that completed (trigger-less jobs run once per version). */
  completed_version?: string;
  /** The last run stopped at the tick's deadline and has not finished yet. */
  interrupted?: boolean;
}

export interface TickClock {
  nowMs: number;
  /** The job's kept random offset (chosen once, see `random-offset`). */
  offsetMs: number;
  /** The deployed version. */
  version: string;
}

export function dueOnTick(trigger: Trigger | undefined, state: TickState, clock: TickClock): boolean {
  if (state.interrupted) return true;
  if (!trigger) return state.completed_version !== clock.version;
  if (trigger.message) return false;
  const firstSeen = state.first_seen_ms ?? clock.nowMs;
  if (trigger.interval) {
    if (state.last_run_ended_ms === undefined) return clock.nowMs >= firstSeen + clock.offsetMs;
    return clock.nowMs - state.last_run_ended_ms >= parseDuration(trigger.interval.duration);
  }
  const cron = trigger.cron!;
  if (state.beats_done_until_ms === undefined && cron.immediate) return true;
  const next = new Cron(cron.cron, { paused: true }).nextRun(
    new Date(state.beats_done_until_ms ?? firstSeen),
  );
  return next !== null && next.getTime() + clock.offsetMs <= clock.nowMs;
}

export interface TickRun {
  startedMs: number;
  endedMs: number;
  offsetMs: number;
  version: string;
  /** False when the tick's deadline cut the run short. */
  completed: boolean;
}

/** The state to keep after a due run. */
export function afterTickRun(trigger: Trigger | undefined, state: TickState, run: TickRun): TickState {
  const next: TickState = {
    ...state,
    first_seen_ms: state.first_seen_ms ?? run.startedMs,
    last_run_ended_ms: run.endedMs,
    interrupted: !run.completed,
  };
  if (run.completed) next.completed_version = run.version;
  // A run serves every beat that was due when it started, however many were missed; the
  // continuation of an interrupted run serves none (beats during it are still owed).
  if (trigger?.cron && !state.interrupted) next.beats_done_until_ms = run.startedMs - run.offsetMs;
  return next;
}

/**
 * The earliest time at which `dueOnTick` is true for this state: 0 when it already is, null
 * when no time makes it true (a trigger-less job done with this version, a message trigger).
 * `firstSeenMs` stands in for a state that has not seen the job yet.
 */
export function nextDueMs(
  trigger: Trigger | undefined,
  state: TickState,
  clock: Omit<TickClock, 'nowMs'> & { firstSeenMs: number },
): number | null {
  if (state.interrupted) return 0;
  if (!trigger) return state.completed_version !== clock.version ? 0 : null;
  if (trigger.message) return null;
  const firstSeen = state.first_seen_ms ?? clock.firstSeenMs;
  if (trigger.interval) {
    if (state.last_run_ended_ms === undefined) return firstSeen + clock.offsetMs;
    return state.last_run_ended_ms + parseDuration(trigger.interval.duration);
  }
  const cron = trigger.cron!;
  if (state.beats_done_until_ms === undefined && cron.immediate) return 0;
  const next = new Cron(cron.cron, { paused: true }).nextRun(
    new Date(state.beats_done_until_ms ?? firstSeen),
  );
  return next === null ? null : next.getTime() + clock.offsetMs;
}
