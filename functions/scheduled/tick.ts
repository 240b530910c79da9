/**
 * The scheduled runner: how the `cloud` worker runs a job it was asked to run (a runner
 * of functions/runs/ calls it with the job of a run request). It takes the job's Firestore
 * lease (renewed while the run goes on), runs the job's input into its output if the job
 * is due, and stops cleanly at the run's budget or before `deadlineMs`: the run is aborted, objects not completely delivered are not fingerprinted,
 * and the next run continues where this one stopped.
 *
 * The caller passes the rendered job; one that is not usable is skipped with a report,
 * never a crash. Whether a job is due is `dueOnTick`
 * (`shared/job/tick-schedule.ts`): once per version without a trigger, `interval` and
 * `cron` on their schedule with the kept random offset, and at once to carry on a run that
 * was cut short. A `window` runs every complete window since the job's watermark (kept in
 * Firestore), one after the other, exactly as on a long-running worker. A part of a run
 * (`partId`, functions/runs/shards.ts) is always due and leaves the schedule alone. A run
 * past its budget is stopped (reported as `job-errors`).
 *
 * @example
 *   const result = await runScheduledJob(deps, job, { deadlineMs: Date.now() + 50_000, runBudgetMs: 60_000 });
 */
import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { JobDefinition } from '../../shared/job/index.ts';
import { triggerOf } from '../../shared/job/schema.ts';
import { afterTickRun, dueOnTick, nextDueMs, type TickState } from '../../shared/job/tick-schedule.ts';
import { jobCollection, leasePath, partLeasePath } from '../adapters/firestore-paths.ts';
import { withActions } from '../runner/actions/with-actions.ts';
import { reportFailure } from '../runner/answered-error.ts';
import { type BuiltOutput, inputFor, outputFor } from '../runner/components.ts';
import type { EgressPolicy } from '../runner/egress/policy.ts';
import { firestoreFingerprints, firestoreWatermarks } from '../runner/fingerprints/firestore.ts';
import type { GcsInputOptions } from '../runner/inputs/gcs/index.ts';
import { createPrintOutput } from '../runner/outputs/print/index.ts';
import { type BoundOutput, bindOutput } from '../runner/run-output.ts';
import { randomOffset, runDueWindows } from '../runner/triggers.ts';
import {
  type Input,
  newOutputMetrics,
  type Output,
  type RunReport,
  type RunWindow,
  type ShardControl,
} from '../runner/types.ts';
import { acquireLease, handLease, releaseLease, renewLease } from './lease.ts';

export interface ScheduledJob {
  tenant: string;
  name: string;
  version?: number | string;
  definition: JobDefinition;
  /** How the run may hand objects to other runners, or the part it reads (functions/runs/). */
  shards?: ShardControl;
  /**
   * Set when the run is a part of another run: it reads the part under a lease of its own
   * (parts go on side by side), is always due, and leaves the job's schedule state alone.
   */
  partId?: string;
  /**
   * Set when notifications came for a job that reads them without a trigger
   * (functions/runs/wake.ts): the run is due although the version already ran once.
   */
  woken?: boolean;
}

export interface ScheduledDeps {
  db: Firestore;
  /** The job's output; when absent or undefined, it is built from the job's kind (components.ts). */
  outputFor?(job: ScheduledJob): Output | undefined;
  /** Where `print` writes (default: standard output, Cloud Logging in the cloud). */
  print?: Output;
  /** Where outputs that connect (http-post) may connect. */
  egress?: EgressPolicy;
  report?(job: ScheduledJob, report: RunReport): void;
  /** Called when a due run is about to start (the `cloud` worker records its deployment as `running`). */
  runStarting?(job: ScheduledJob): Promise<void>;
  /** Builds the input; the default knows `gcs`. */
  inputFor?(job: ScheduledJob): Input | undefined;
  gcsOptions?: GcsInputOptions;
  /** Identifies this invocation in leases. */
  owner?: string;
  /**
   * How long a job's lease lasts without renewal (default 15 s); a run renews it every third
   * of that, so a runner that dies frees its jobs this long after, whatever its deadline.
   */
  leaseMs?: number;
  /**
   * Called when a run ends: the lease goes to this owner until then instead of being
   * released (a run whose parts other runners still read keeps its job from running again;
   * the `cloud` runner keeps it until it has recorded what the run leaves).
   */
  leaseAfterRun?(job: ScheduledJob): { owner: string; untilMs: number } | undefined;
  now?: () => number;
}

export interface TickOptions {
  /** Epoch ms by which the tick returns. */
  deadlineMs: number;
  /** Stop runs this long before the deadline, to release leases and flush. Default 2 s. */
  marginMs?: number;
  /** Longest the run may take. Default: until the deadline. */
  runBudgetMs?: number;
}

export type JobTickOutcome =
  | 'completed'
  | 'stopped-at-deadline'
  | 'stopped-at-budget'
  | 'leased-elsewhere'
  | 'not-due'
  | 'skipped'
  | 'failed';

export interface JobTickResult {
  tenant: string;
  job: string;
  outcome: JobTickOutcome;
  error?: string;
  /**
   * When the job is due next, as its state stands after this tick (null: not until it is
   * deployed again); for a failed run, when it would be due had it completed (the failed
   * run itself is retried by whoever asked for it); absent when this tick did not look
   * (leased elsewhere, skipped).
   */
  nextDueMs?: number | null;
  /** Leased elsewhere: until when the other run's lease lasts unless renewed. */
  leaseExpiresMs?: number;
}

export async function runScheduledJob(
  deps: ScheduledDeps,
  job: ScheduledJob,
  options: TickOptions,
): Promise<JobTickResult> {
  const now = deps.now ?? Date.now;
  const owner = deps.owner ?? `run-${randomUUID()}`;
  const stopAt = options.deadlineMs - (options.marginMs ?? 2_000);
  const budgetMs = Math.max(1, Math.min(stopAt - now(), options.runBudgetMs ?? Number.POSITIVE_INFINITY));
  return runOne(deps, job, owner, { stopAt, budgetMs }, now);
}

const DEADLINE = 'scheduled tick deadline';
const BUDGET = 'run budget';

async function runOne(
  deps: ScheduledDeps,
  job: ScheduledJob,
  owner: string,
  limits: { stopAt: number; budgetMs: number },
  now: () => number,
): Promise<JobTickResult> {
  const { stopAt, budgetMs } = limits;
  const base = { tenant: job?.tenant, job: job?.name };
  const report = (r: RunReport) => deps.report?.(job, r);
  const input = safeInput(deps, job);
  if (!input || !job.tenant || !job.name) {
    report({ type: 'job-errors', payload: { reason: 'not runnable on the cloud worker', job: job?.name } });
    return { ...base, outcome: 'skipped' };
  }
  const stateDoc = jobCollection(deps.db, job.tenant, job.name, 'scheduled').doc('state');
  const path = job.partId ? partLeasePath(job.tenant, job.name, job.partId) : leasePath(job.tenant, job.name);
  const leaseMs = deps.leaseMs ?? 15_000;
  const lease = await acquireLease(deps.db, path, { owner, untilMs: now() + leaseMs, nowMs: now() });
  if (!lease.acquired) return { ...base, outcome: 'leased-elsewhere', leaseExpiresMs: lease.expiresAtMs };
  const renewal = setInterval(() => {
    void renewLease(deps.db, path, owner, Date.now() + leaseMs).catch(() => {});
  }, leaseMs / 3);
  // What a failed run leaves as the job's next due time: when it would be due had it completed.
  let ifCompleted: (() => number | null) | undefined;
  const controller = new AbortController();
  const budgetEnds = now() + budgetMs;
  const reason = budgetEnds < stopAt ? BUDGET : DEADLINE;
  const limitAt = Math.min(stopAt, budgetEnds);
  // The clock is checked after every delivery too: a loaded event loop runs timers late, and
  // with an injected clock (tests) the deliveries alone decide when the limit is reached.
  const timer = deps.now
    ? undefined
    : setTimeout(() => controller.abort(new Error(reason)), Math.max(0, limitAt - now()));
  // Before the limit the run winds up (RunContext.wrapUp): what it read is delivered and kept.
  const wrapUp = new AbortController();
  const wrapUpAt = limitAt - wrapUpMs(limitAt - now());
  const wrapUpTimer = deps.now
    ? undefined
    : setTimeout(() => wrapUp.abort(new Error(reason)), Math.max(0, wrapUpAt - now()));
  const checkLimit = () => {
    if (!wrapUp.signal.aborted && now() >= wrapUpAt) wrapUp.abort(new Error(reason));
    if (!controller.signal.aborted && now() >= limitAt) controller.abort(new Error(reason));
  };
  /** Aborted when the input wound up with work left: the run is not complete. */
  const undone = new AbortController();
  const stoppedBy = () => ((controller.signal.reason ?? undone.signal.reason) as Error | undefined)?.message;
  /** Stopped at its limit: cut, or wound up before it with its rest still to read. */
  const stopped = () => controller.signal.aborted || undone.signal.aborted;
  try {
    const trigger = triggerOf(job.definition);
    const spec = trigger?.interval ?? trigger?.cron;
    const watermarks = firestoreWatermarks(deps.db, { tenant: job.tenant });
    // A window the run wound up in is not done: its watermark stays, and no next window starts.
    const triggerContext = {
      job: job.name,
      signal: AbortSignal.any([controller.signal, undone.signal]),
      watermarks,
      now,
    };
    const offsetMs = spec ? await randomOffset(triggerContext, parseDuration(spec['random-offset'])) : 0;
    const state = ((await stateDoc.get()).data() ?? {}) as TickState;
    const startedMs = now();
    const version = String(job.version ?? '');
    ifCompleted = () =>
      nextDueMs(
        trigger,
        afterTickRun(trigger, state, { startedMs, endedMs: now(), offsetMs, version, completed: true }),
        { offsetMs, version, firstSeenMs: startedMs },
      );
    if (!job.partId && !job.woken && !dueOnTick(trigger, state, { nowMs: startedMs, offsetMs, version })) {
      // The reference of a first interval or cron run: when a tick first saw the job.
      if (state.first_seen_ms === undefined)
        await stateDoc.set({ first_seen_ms: startedMs }, { merge: true });
      const seen = { ...state, first_seen_ms: state.first_seen_ms ?? startedMs };
      return {
        ...base,
        outcome: 'not-due',
        nextDueMs: nextDueMs(trigger, seen, { offsetMs, version, firstSeenMs: startedMs }),
      };
    }
    await deps.runStarting?.(job);
    const built = outputOf(deps, job, report, controller.signal);
    const output = limitChecked(bindOutput(built, report), checkLimit);
    const runOnce = async (window?: RunWindow) => {
      let failed = true;
      try {
        await input.run(
          {
            job: job.name,
            worker: 'cloud',
            signal: controller.signal,
            wrapUp: {
              signal: wrapUp.signal,
              leftUndone: () => undone.abort(wrapUp.signal.reason),
            },
            fingerprints: firestoreFingerprints(deps.db, { tenant: job.tenant }),
            watermarks,
            report,
            ...(window ? { window } : {}),
            ...(job.shards ? { shards: job.shards } : {}),
            ...output.context,
          },
          output.deliver,
        );
        failed = false;
      } finally {
        // Before a window's watermark moves on: everything of the run acknowledged.
        await output.endRun({ failed: failed || controller.signal.aborted });
      }
    };
    try {
      // A part's objects were chosen in its run's window already.
      if (spec?.window && !job.partId) await runDueWindows(spec.window, runOnce, triggerContext);
      else await runOnce();
    } catch (err) {
      // An input stopped by the abort may throw (a cancelled request): that is a stop, not a failure.
      if (!controller.signal.aborted) throw err;
    } finally {
      await built.output.close();
    }
    const completed = !stopped();
    const after = afterTickRun(trigger, state, { startedMs, endedMs: now(), offsetMs, version, completed });
    if (!job.partId) await stateDoc.set(after, { merge: true });
    const ran = {
      ...base,
      ...(job.partId
        ? {}
        : { nextDueMs: nextDueMs(trigger, after, { offsetMs, version, firstSeenMs: startedMs }) }),
    };
    if (completed) return { ...ran, outcome: 'completed' };
    if (stoppedBy() !== BUDGET) return { ...ran, outcome: 'stopped-at-deadline' };
    report({
      type: 'job-errors',
      payload: {
        reason: controller.signal.aborted
          ? `the run took longer than its time budget of ${budgetMs} ms on the cloud worker and was stopped; its rest was requested again and carries on from what it committed`
          : `the run reached its time budget of ${budgetMs} ms on the cloud worker: what it had read is delivered and kept, and its rest was requested again and carries on from there`,
        budget_ms: budgetMs,
      },
    });
    return { ...ran, outcome: 'stopped-at-budget' };
  } catch (err) {
    reportFailure(report, err);
    return {
      ...base,
      outcome: 'failed',
      error: (err as Error).message,
      ...(ifCompleted && !job.partId ? { nextDueMs: ifCompleted() } : {}),
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(wrapUpTimer);
    clearInterval(renewal);
    const handOver = deps.leaseAfterRun?.(job);
    await (handOver ? handLease(deps.db, path, owner, handOver) : releaseLease(deps.db, path, owner)).catch(
      () => {},
    );
  }
}

function safeInput(deps: ScheduledDeps, job: ScheduledJob): Input | undefined {
  try {
    // withActions leaves an input that already applies the job's actions as it is.
    const input = deps.inputFor
      ? deps.inputFor(job)
      : inputFor(job.definition, deps.gcsOptions ? { gcs: deps.gcsOptions } : {});
    return input && withActions(input, job.definition);
  } catch {
    return undefined;
  }
}

/** The job's output: the caller's (tests), else built from its kind, `print` to the caller's print output. */
function outputOf(
  deps: ScheduledDeps,
  job: ScheduledJob,
  report: (r: RunReport) => void,
  signal: AbortSignal,
): BuiltOutput {
  const given = deps.outputFor?.(job);
  if (given) return { kind: 'print', output: given, metrics: newOutputMetrics() };
  return outputFor(job.definition, {
    print: deps.print ?? createPrintOutput(process.stdout),
    report,
    signal,
    ...(deps.egress ? { egress: deps.egress } : {}),
    stored: true,
  });
}

/** The bound output, checking the run's time limit after each delivery. */
function limitChecked(output: BoundOutput, checkLimit: () => void): BoundOutput {
  const lines = output.context.deliverJsonLines;
  return {
    ...output,
    context: {
      ...output.context,
      ...(lines
        ? {
            deliverJsonLines: async (...args: Parameters<typeof lines>) => {
              const result = await lines(...args);
              checkLimit();
              return result;
            },
          }
        : {}),
    },
    deliver: async (events, unit) => {
      await output.deliver(events, unit);
      checkLimit();
    },
  };
}

/**
 * How long before its limit a run winds up: a quarter of its time, at most 15 s, for the
 * objects being read to finish and their events to be delivered and acknowledged.
 */
function wrapUpMs(timeLeftMs: number): number {
  return Math.min(timeLeftMs / 4, 15_000);
}
