/**
 * The scheduled runner: what the `cloud` worker does on every tick (Cloud Scheduler in
 * the cloud, a timer in the local stack). For each job deployed to `cloud` it takes the
 * job's Firestore lease, runs the job's input into its output, and stops cleanly before
 * `deadlineMs` (the function's time limit minus a margin): the run is aborted, objects
 * not completely delivered are not fingerprinted, and the next tick continues where
 * this one stopped.
 *
 * Which jobs are deployed is the deployments store's business: the caller passes
 * `jobs()` (rendered definitions); entries that are not usable are skipped with a
 * report, never a crash. Whether a job is due is `dueOnTick` (`shared/job/tick-schedule.ts`):
 * once per version without a trigger, `interval` and `cron` on their schedule with the
 * kept random offset, and at once to carry on a run the deadline cut short. A `window`
 * runs every complete window since the job's watermark (kept in Firestore), one after
 * the other, exactly as on a long-running worker.
 *
 * @example
 *   await runScheduledTick(deps, { deadlineMs: Date.now() + 50_000 });
 */
import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { JobDefinition } from '../../shared/job/index.ts';
import { triggerOf } from '../../shared/job/schema.ts';
import { afterTickRun, dueOnTick, type TickState } from '../../shared/job/tick-schedule.ts';
import { firestoreFingerprints, firestoreWatermarks } from '../runner/fingerprints/firestore.ts';
import { createGcsInput, type GcsInputOptions } from '../runner/inputs/gcs/index.ts';
import { randomOffset, runDueWindows } from '../runner/triggers.ts';
import { type Input, jsonLinesTo, type Output, type RunReport, type RunWindow } from '../runner/types.ts';
import { acquireLease, leasePath, releaseLease } from './lease.ts';

export interface ScheduledJob {
  tenant: string;
  name: string;
  version?: number | string;
  definition: JobDefinition;
}

export interface ScheduledDeps {
  db: Firestore;
  /** The rendered jobs deployed to the `cloud` worker. */
  jobs(): Promise<ScheduledJob[]>;
  outputFor(job: ScheduledJob): Output;
  report?(job: ScheduledJob, report: RunReport): void;
  /** Builds the input; the default knows `gcs`. */
  inputFor?(job: ScheduledJob): Input | undefined;
  gcsOptions?: GcsInputOptions;
  /** Identifies this invocation in leases. */
  owner?: string;
  now?: () => number;
}

export interface TickOptions {
  /** Epoch ms by which the tick returns. */
  deadlineMs: number;
  /** Stop runs this long before the deadline, to release leases and flush. Default 2 s. */
  marginMs?: number;
}

export type JobTickOutcome =
  | 'completed'
  | 'stopped-at-deadline'
  | 'leased-elsewhere'
  | 'not-due'
  | 'skipped'
  | 'failed';

export interface JobTickResult {
  tenant: string;
  job: string;
  outcome: JobTickOutcome;
  error?: string;
}

export async function runScheduledTick(deps: ScheduledDeps, options: TickOptions): Promise<JobTickResult[]> {
  const now = deps.now ?? Date.now;
  const owner = deps.owner ?? `tick-${randomUUID()}`;
  const stopAt = options.deadlineMs - (options.marginMs ?? 2_000);
  const results: JobTickResult[] = [];
  let jobs: ScheduledJob[];
  try {
    jobs = await deps.jobs();
  } catch (err) {
    return [
      { tenant: '', job: '', outcome: 'failed', error: `cannot read deployments: ${(err as Error).message}` },
    ];
  }
  for (const job of jobs) {
    if (now() >= stopAt) break;
    results.push(await runOne(deps, job, owner, stopAt, now));
  }
  return results;
}

async function runOne(
  deps: ScheduledDeps,
  job: ScheduledJob,
  owner: string,
  stopAt: number,
  now: () => number,
): Promise<JobTickResult> {
  const base = { tenant: job?.tenant, job: job?.name };
  const report = (r: RunReport) => deps.report?.(job, r);
  const input = safeInput(deps, job);
  if (!input || !job.tenant || !job.name) {
    report({ type: 'job-errors', payload: { reason: 'not runnable on the cloud worker', job: job?.name } });
    return { ...base, outcome: 'skipped' };
  }
  const stateDoc = deps.db.doc(`tenants/${job.tenant}/jobs/${job.name}/scheduled/state`);
  const path = leasePath(job.tenant, job.name);
  if (!(await acquireLease(deps.db, path, { owner, untilMs: stopAt + 10_000, nowMs: now() }))) {
    return { ...base, outcome: 'leased-elsewhere' };
  }
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error('scheduled tick deadline')),
    Math.max(0, stopAt - now()),
  );
  try {
    const trigger = triggerOf(job.definition);
    const spec = trigger?.interval ?? trigger?.cron;
    const watermarks = firestoreWatermarks(deps.db, { tenant: job.tenant });
    const triggerContext = { job: job.name, signal: controller.signal, watermarks, now };
    const offsetMs = spec ? await randomOffset(triggerContext, parseDuration(spec['random-offset'])) : 0;
    const state = ((await stateDoc.get()).data() ?? {}) as TickState;
    const startedMs = now();
    const version = String(job.version ?? '');
    if (!dueOnTick(trigger, state, { nowMs: startedMs, offsetMs, version })) {
      // The reference of a first interval or cron run: when a tick first saw the job.
      if (state.first_seen_ms === undefined)
        await stateDoc.set({ first_seen_ms: startedMs }, { merge: true });
      return { ...base, outcome: 'not-due' };
    }
    const output = deps.outputFor(job);
    const deliverJsonLines = jsonLinesTo(output);
    const runOnce = (window?: RunWindow) =>
      input.run(
        {
          job: job.name,
          worker: 'cloud',
          signal: controller.signal,
          fingerprints: firestoreFingerprints(deps.db, { tenant: job.tenant }),
          watermarks,
          report,
          ...(window ? { window } : {}),
          ...(deliverJsonLines ? { deliverJsonLines } : {}),
        },
        (events) => output.write(events),
      );
    try {
      if (spec?.window) await runDueWindows(spec.window, runOnce, triggerContext);
      else await runOnce();
    } finally {
      await output.close();
    }
    const completed = !controller.signal.aborted;
    await stateDoc.set(
      afterTickRun(trigger, state, { startedMs, endedMs: now(), offsetMs, version, completed }),
      { merge: true },
    );
    return { ...base, outcome: completed ? 'completed' : 'stopped-at-deadline' };
  } catch (err) {
    report({ type: 'run-job-failure', payload: { job: job.name, error: (err as Error).message } });
    return { ...base, outcome: 'failed', error: (err as Error).message };
  } finally {
    clearTimeout(timer);
    await releaseLease(deps.db, path, owner).catch(() => {});
  }
}

function safeInput(deps: ScheduledDeps, job: ScheduledJob): Input | undefined {
  try {
    if (deps.inputFor) return deps.inputFor(job);
    const gcs = job?.definition?.input?.gcs;
    return gcs ? createGcsInput(gcs, deps.gcsOptions) : undefined;
  } catch {
    return undefined;
  }
}
