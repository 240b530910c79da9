/**
 * A runner executes one run request of the `cloud` worker (functions/runs/dispatch.ts
 * publishes them): it reads the job, takes one of its tenant's run slots, renders the job
 * and runs it through the scheduled runner (scheduled/tick.ts), which holds the job's
 * lease, checks that it is due and stops it at its budget. Then it records the
 * deployment's state and when the job is due next.
 *
 * What it answers decides what Pub/Sub does with the request:
 * - acknowledge: done, not due, not deployed, refused (recorded as `job-errors`, looked at
 *   again next tick), leased by another runner (looked at again when that lease ends,
 *   unless that run says otherwise), its tenant at its cap (looked at again next tick:
 *   delayed, not dropped; a part, or a run notifications woke, is parked until a slot is
 *   free instead (parked-runs.ts), so that waiting neither keeps a runner busy nor counts
 *   as a failed delivery), stopped at its budget (the rest is requested again at once, unless three
 *   attempts in a row got nowhere: stalls.ts);
 * - retry: the run failed. Pub/Sub delivers it again with back-off; the fifth failure sends it
 *   to the dead-letter topic, and `handleDeadRunRequest` reports `run-job-failure`.
 *
 * A `gcs` run that finds more than `SLUICE_SHARD_OBJECTS` objects to read hands the rest
 * to other runners as part requests (shards.ts). From the first part on the parts hold the
 * job (each renews that hold while it waits for a slot and reads); a part reads its objects
 * under a lease of its own, and every final answer to a part ends it in its run's counter:
 * read, given up, refused, not runnable, or left unread because its run no longer holds the
 * job. The last to end records the deployment's state, reports the run's one
 * `job-run-ended` and frees the job (requesting the run's rest at once when it has one).
 * Parts of a job no longer deployed (or deployed as another version) drop their run.
 *
 * Delivered twice at once, a request runs once: the second delivery finds the lease
 * taken. Delivered again after its run, it finds the job not due. A runner that dies
 * mid-run leaves its objects unfingerprinted and its lease expiring within `leaseMs`;
 * Pub/Sub delivers the request again and the run carries on from the fingerprints. One that
 * dies after handing parts over leaves the job with the parts; the request delivered again
 * finds its run (the run's id comes from the request), ends the dead run's share, and the
 * run's rest is read once its parts are done.
 *
 * @example
 *   const answer = await handleRunRequest(deps, request, { owner: 'runner-1' });
 *   answer.ack ? message.ack() : message.nack();
 */
import { randomUUID } from 'node:crypto';
import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { EventType } from '../../shared/events/vocabulary.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { leasePath, partLeasePath } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEvent } from '../events/event-log.ts';
import type { DeploymentStateChange } from '../jobs/deployments.ts';
import { type Deployment, jobsCollection } from '../jobs/store.ts';
import { inputFor } from '../runner/components.ts';
import { EgressPolicy } from '../runner/egress/policy.ts';
import { createPrintOutput } from '../runner/outputs/print/index.ts';
import type { Redactor } from '../runner/redact.ts';
import { sleep } from '../runner/sleep.ts';
import type { Output } from '../runner/types.ts';
import { releaseLease } from '../scheduled/lease.ts';
import {
  type JobTickOutcome,
  type JobTickResult,
  runScheduledJob,
  type ScheduledDeps,
  type ScheduledJob,
} from '../scheduled/tick.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';
import { type CloudJob, renderCloudJob } from './cloud-job.ts';
import { recordCloudState, recordNextDue, stateAfter } from './cloud-states.ts';
import { requestHorizonMs, requestRuns } from './dispatch.ts';
import { parkRun, releaseParkedRun } from './parked-runs.ts';
import { holdJob, keepHolding, partsOwner, runIdOf } from './parts-hold.ts';
import { publishRunRequests } from './run-channel.ts';
import {
  deleteRun,
  endShare,
  noteRun,
  partEnded,
  partsReading,
  priorRun,
  RunParts,
  runState,
  type ShareEnd,
} from './shards.ts';
import {
  madeProgress,
  nextDueAsUsual,
  nextStalls,
  reportGivenUp,
  STALL_LIMIT,
  stallReason,
} from './stalls.ts';
import { takeRunSlot } from './tenant-slots.ts';
import { recordNextDueAtLeaseEnd, releaseJob } from './wake.ts';

export interface RunnerContext {
  /** Names this runner (process or function instance) in leases and slots. */
  owner: string;
  /** Where `print` writes (default: standard output, Cloud Logging in the cloud). */
  print?: Output;
}

export interface RunAnswer {
  /** False: Pub/Sub should deliver the request again. */
  ack: boolean;
  /**
   * What became of the request. Besides the scheduled runner's outcomes: `resumed` (a request
   * delivered again whose runner died after handing parts over: the dead run's share ended)
   * and `abandoned` (a part whose run no longer holds the job: not read).
   */
  outcome: JobTickOutcome | 'not-deployed' | 'refused' | 'tenant-at-cap' | 'resumed' | 'abandoned';
  result?: JobTickResult;
}

type PartRequest = RunRequest & { part: NonNullable<RunRequest['part']> };

/** Time between a run's budget and the runner's own deadline: to stop, flush and record. */
const RUN_MARGIN_MS = 2_000;
/** The scheduled runner's own margin before the deadline, so the budget is what stops a run. */
const STOP_MARGIN_MS = 1_000;

export async function handleRunRequest(
  deps: AppDeps,
  request: RunRequest,
  context: RunnerContext,
): Promise<RunAnswer> {
  const db = await deps.clients.firestore();
  const doc = await jobsCollection(db, request.tenant).doc(request.job).get();
  const turn: Turn = { slotTaken: false, parked: false };
  try {
    return request.part
      ? await handlePart(deps, db, request as PartRequest, context, doc, turn)
      : await handleRun(deps, db, request, context, doc, turn);
  } finally {
    // Released for a slot it did not take (its job gone, its run over): the next in line gets it.
    if (request.waiting_since_ms !== undefined && !turn.slotTaken && !turn.parked)
      await releaseParkedRun(deps, db, request.tenant).catch(() => {});
  }
}

/** What a request did with its tenant's slots: took one, or was parked to wait for one. */
interface Turn {
  slotTaken: boolean;
  parked: boolean;
}

/** A run of the job: the tick's, a deploy's, a notification's, or a run's rest. */
async function handleRun(
  deps: AppDeps,
  db: Firestore,
  request: RunRequest,
  context: RunnerContext,
  doc: DocumentSnapshot,
  turn: Turn,
): Promise<RunAnswer> {
  const { tenant, job } = request;
  const runId = runIdOf(request);
  const deployment = doc.get(`deployments.${CLOUD_WORKER}`) as Deployment | undefined;
  if (!deployment) {
    // A run of this request that handed parts over goes with its job.
    if ((await runState(db, tenant, job, runId)).exists) await dropRun(deps, db, request, runId);
    return { ack: true, outcome: 'not-deployed' };
  }
  // Delivered again: the run this request started may have handed parts over.
  switch (await priorRunSettled(deps, db, request, runId)) {
    case 'running':
    case 'ended':
      // Its parts hold the job; whoever ends last frees it.
      return { ack: true, outcome: 'leased-elsewhere' };
    case 'dead':
      // Its runner died: the run's share ends (what it read is fingerprinted), the run reports
      // when its parts are done, and its rest is requested then.
      await endRunPart(deps, request, runId, { aborted: true }, (v) => v, { rest: true });
      return { ack: true, outcome: 'resumed' };
  }
  const { version } = deployment;
  const budgetMs = parseDuration(deps.config.cloudRunBudget);
  const leaseMs = parseDuration(deps.config.runLease);
  const run = `${context.owner}.${randomUUID()}`;
  // A run that notifications woke is parked until a slot is free (the tick would not request
  // it again); a run of the tick waits for the next tick.
  const slot = await takeSlot(deps, db, tenant, run, turn);
  if (!slot) {
    if (request.reason === 'notified') return await park(db, request, turn);
    await recordNextDue(db, tenant, job, version, undefined);
    return { ack: true, outcome: 'tenant-at-cap' };
  }
  let parts: RunParts | undefined;
  try {
    const rendered = await renderCloudJob(deps, db, new ContextStore(db), doc);
    if (!rendered.ok) {
      if (rendered.reason === undefined) return { ack: true, outcome: 'not-deployed' };
      await recordCloudState(db, tenant, { job, state: 'failed', error: rendered.reason });
      await recordNextDue(db, tenant, job, version, undefined);
      return { ack: true, outcome: 'refused' };
    }
    const handing = new RunParts(
      deps,
      db,
      request,
      {
        id: runId,
        owner: run,
        leaseMs,
        facts: async () => ({
          runsOnce: rendered.runsOnce,
          dueIfGivenUp: await nextDueAsUsual(db, rendered.job),
        }),
      },
      deps.config.shardObjects,
    );
    parts = handing;
    const attempt = await runAttempt(deps, db, context, rendered, {
      job: {
        ...rendered.job,
        shards: handing.control,
        ...(request.reason === 'notified' ? { woken: true } : {}),
      },
      owner: run,
      async runStarting() {
        await recordCloudState(db, tenant, { job, state: 'running' });
      },
      // Handed to the parts, the job is theirs; else the run keeps it until it has recorded
      // what it leaves (afterRun, releaseJob).
      leaseAfterRun: () => (handing.count > 0 ? undefined : { owner: run, untilMs: Date.now() + leaseMs }),
      // A run read in parts reports once, with its parts' totals (endRunPart).
      collects: () => handing.count > 0,
    });
    handing.stop();
    await slot.free();
    const { result } = attempt;
    if (handing.count > 0) {
      // Its parts end the run: the last records the state, reports the totals, frees the job
      // and requests the run's rest if it has one.
      await endRunPart(deps, request, runId, attempt.ended ?? { failed: true }, rendered.redact, {
        rest: stoppedAtLimit(result),
        ...(result.outcome === 'failed' ? { error: rendered.redact(result.error ?? 'the run failed') } : {}),
      });
      return { ack: true, outcome: result.outcome, result };
    }
    if (stoppedAtLimit(result))
      return await afterStop(deps, request, { version, owner: run, budgetMs }, rendered, attempt);
    // The reason of a failed run quotes what the job was given: its secrets' values too.
    const state = stateAfter(result, rendered.runsOnce);
    if (state) await recordCloudState(db, tenant, rendered.redact(state));
    return await afterRun(deps, request, { version, owner: run }, result);
  } catch (err) {
    // The job is not held until its lease lapses: the request comes again and runs it.
    await releaseLease(db, leasePath(tenant, job), run).catch(() => {});
    throw err;
  } finally {
    parts?.stop();
    await slot.free();
  }
}

/** A part of a run: objects its run handed over. */
async function handlePart(
  deps: AppDeps,
  db: Firestore,
  request: PartRequest,
  context: RunnerContext,
  doc: DocumentSnapshot,
  turn: Turn,
): Promise<RunAnswer> {
  const { tenant, job, part } = request;
  const runId = part.run;
  if (!deployedAsRequested(doc, request)) {
    await dropRun(deps, db, request, runId);
    return { ack: true, outcome: 'not-deployed' };
  }
  // The part holds its run's job from the moment it is taken, while it waits for a slot and
  // while it reads. A run that no longer holds the job is over, or another run has the job.
  if (!(await holdJob(deps, db, request, runId))) return await abandon(deps, request);
  // Delivered again after it was read (Pub/Sub delivers at least once; a releaser can die
  // between publishing and clearing it) while its run goes on: read again, a job without
  // fingerprints would deliver its objects twice.
  if (await partEnded(db, tenant, job, runId, part.index)) return { ack: true, outcome: 'leased-elsewhere' };
  const stopHolding = keepHolding(deps, db, request, runId);
  const run = `${context.owner}.${randomUUID()}`;
  try {
    const slot = await takeSlot(deps, db, tenant, run, turn);
    if (!slot) return await park(db, request, turn);
    try {
      // What may have changed while it waited.
      const fresh = await jobsCollection(db, tenant).doc(job).get();
      if (!deployedAsRequested(fresh, request)) {
        await dropRun(deps, db, request, runId);
        return { ack: true, outcome: 'not-deployed' };
      }
      if (!(await holdJob(deps, db, request, runId))) return await abandon(deps, request);
      const rendered = await renderCloudJob(deps, db, new ContextStore(db), fresh);
      if (!rendered.ok) {
        if (rendered.reason === undefined) {
          await dropRun(deps, db, request, runId);
          return { ack: true, outcome: 'not-deployed' };
        }
        // Refused (recorded as `job-errors`): not read; its run ends failed, with the reason.
        await endRunPart(deps, request, runId, { failed: true, failed_parts: 1 }, (v) => v, {
          error: rendered.reason,
        });
        return { ack: true, outcome: 'refused' };
      }
      const threshold = deps.config.shardObjects;
      const attempt = await runAttempt(deps, db, context, rendered, {
        job: {
          ...rendered.job,
          partId: `${runId}-${part.index}`,
          shards: {
            threshold,
            part: part.objects,
            request: () => Promise.reject(new Error('a part hands nothing over')),
          },
        },
        owner: run,
        // A part records no state: its run's stays `running` until the last part has ended.
        leaseAfterRun: () => undefined,
        collects: () => true,
        part: true,
      });
      await slot.free();
      return await afterPart(deps, request, attempt, rendered.redact);
    } finally {
      await slot.free();
    }
  } finally {
    stopHolding();
  }
}

interface Attempt {
  result: JobTickResult;
  /** The last `job-run-ended` payload, when collected rather than reported. */
  ended?: Record<string, unknown>;
  /** Every `job-run-ended` payload of the attempt (a `window` run has one per window). */
  endedPayloads: Record<string, unknown>[];
}

/** One run through the scheduled runner, its events recorded as the job's. */
async function runAttempt(
  deps: AppDeps,
  db: Firestore,
  context: RunnerContext,
  rendered: Extract<CloudJob, { ok: true }>,
  options: {
    job: ScheduledJob;
    owner: string;
    runStarting?: ScheduledDeps['runStarting'];
    leaseAfterRun: NonNullable<ScheduledDeps['leaseAfterRun']>;
    /** Whether a `job-run-ended` is kept for the run's totals rather than reported. */
    collects: () => boolean;
    part?: boolean;
  },
): Promise<Attempt> {
  const { tenant, name: job } = options.job;
  const budgetMs = parseDuration(deps.config.cloudRunBudget);
  const egress = egressPolicyFor(deps.config.egressAllow);
  const endedPayloads: Record<string, unknown>[] = [];
  let ended: Record<string, unknown> | undefined;
  const result = await runScheduledJob(
    {
      db,
      print: context.print ?? createPrintOutput(process.stdout),
      egress,
      // A job woken by notifications reads what is waiting, then ends when quiet.
      inputFor: (scheduled) =>
        inputFor(scheduled.definition, { egress, gcs: { notificationsEndWhenQuiet: true } }),
      owner: options.owner,
      leaseMs: parseDuration(deps.config.runLease),
      ...(options.runStarting ? { runStarting: options.runStarting } : {}),
      leaseAfterRun: options.leaseAfterRun,
      report(_job, report) {
        if (options.part && report.type === 'job-run-started') return;
        if (report.type === 'job-run-ended') {
          const payload = report.payload as Record<string, unknown>;
          endedPayloads.push(payload);
          if (options.collects()) {
            ended = payload;
            return;
          }
        }
        void appendEvent(db, tenant, {
          type: report.type as EventType,
          source: 'job',
          worker: CLOUD_WORKER,
          job,
          payload: rendered.redact(report.payload),
        }).catch((err) => deps.logger.warn({ err }, 'could not record a run event'));
      },
    },
    options.job,
    { deadlineMs: Date.now() + budgetMs + RUN_MARGIN_MS, marginMs: STOP_MARGIN_MS, runBudgetMs: budgetMs },
  );
  return { result, ...(ended ? { ended } : {}), endedPayloads };
}

/**
 * A run (not read in parts) stopped at its budget: its rest is requested again at once,
 * with its stall count, unless STALL_LIMIT attempts in a row got nowhere (stalls.ts).
 */
async function afterStop(
  deps: AppDeps,
  { tenant, job, stalls: before }: RunRequest,
  { version, owner, budgetMs }: { version: number; owner: string; budgetMs: number },
  rendered: Extract<CloudJob, { ok: true }>,
  { result, endedPayloads }: Attempt,
): Promise<RunAnswer> {
  const db = await deps.clients.firestore();
  const answer = { ack: true, outcome: result.outcome, result };
  const stalls = nextStalls(before, madeProgress(endedPayloads));
  if (stalls >= STALL_LIMIT) {
    const nextDueMs = await nextDueAsUsual(db, rendered.job);
    await reportGivenUp(db, tenant, job, stallReason(budgetMs, 'run'), budgetMs, () =>
      releaseJob(deps, { tenant, job }, owner, { version, nextDueMs }),
    );
    return answer;
  }
  await recordCloudState(db, tenant, { job, state: 'idle' });
  // Free before its rest is requested, or the rest would find the job leased.
  await releaseLease(db, leasePath(tenant, job), owner);
  await requestRuns(deps, [{ tenant, job, version, ...(stalls ? { stalls } : {}) }], 'continue');
  return answer;
}

/**
 * Records what a run leaves (its next due time) once it completed, failed, found the job
 * not due or leased elsewhere, gives the job's lease back (`owner`'s, kept since the run
 * ended) and answers Pub/Sub.
 */
async function afterRun(
  deps: AppDeps,
  { tenant, job }: RunRequest,
  { version, owner }: { version: number; owner: string },
  result: JobTickResult,
): Promise<RunAnswer> {
  const answer = { outcome: result.outcome, result };
  switch (result.outcome) {
    case 'leased-elsewhere':
      // Looked at again when that lease ends; the run holding it records its own next due time.
      await recordNextDueAtLeaseEnd(deps, { tenant, job }, version);
      return { ack: true, ...answer };
    case 'failed':
      // Pub/Sub delivers it again; the job's schedule goes on meanwhile.
      await releaseJob(deps, { tenant, job }, owner, {
        version,
        nextDueMs: result.nextDueMs ?? Date.now() + requestHorizonMs(deps),
      });
      return { ack: false, ...answer };
    default:
      await releaseJob(deps, { tenant, job }, owner, { version, nextDueMs: result.nextDueMs });
      return { ack: true, ...answer };
  }
}

/** A part read, or stopped: every final answer ends it in its run's counter. */
async function afterPart(
  deps: AppDeps,
  request: PartRequest,
  { result, ended, endedPayloads }: Attempt,
  redact: Redactor,
): Promise<RunAnswer> {
  const db = await deps.clients.firestore();
  const { tenant, job } = request;
  const runId = request.part.run;
  const answer = { outcome: result.outcome, result };
  switch (result.outcome) {
    case 'completed':
      await endRunPart(deps, request, runId, ended ?? {}, redact);
      return { ack: true, ...answer };
    case 'stopped-at-budget':
    case 'stopped-at-deadline': {
      const stalls = nextStalls(request.stalls, madeProgress(endedPayloads));
      if (stalls >= STALL_LIMIT) {
        // It cannot get anywhere within the budget: given up; its run reports it when it ends.
        await endRunPart(deps, request, runId, { ...(ended ?? {}), stalled_parts: 1 }, redact);
        return { ack: true, ...answer };
      }
      // The objects it read are fingerprinted: the same part again reads the rest.
      const { stalls: _, ...again } = request;
      await noteRun(db, tenant, job, runId, {});
      await publishRunRequests(await deps.clients.pubsub(), [
        { ...again, requested_ms: Date.now(), ...(stalls ? { stalls } : {}) },
      ]);
      return { ack: true, ...answer };
    }
    case 'failed':
      // Pub/Sub delivers it again (and, the fifth time, dead-letters it: handleDeadRunRequest
      // ends it); its run keeps the reason for its end.
      await noteRun(db, tenant, job, runId, { error: redact(result.error ?? 'a part of the run failed') });
      return { ack: false, ...answer };
    case 'skipped':
      await endRunPart(deps, request, runId, { failed: true, failed_parts: 1 }, redact, {
        error: 'not runnable on the cloud worker',
      });
      return { ack: true, ...answer };
    case 'leased-elsewhere':
      // Another delivery of this part reads it and ends it. This one waits for that (or for
      // its runner's lease to lapse) and comes again: it then finds the part ended, or reads
      // what a dead runner left. Not answered "again later": Pub/Sub would count each such
      // answer as a failed delivery (the emulator redelivers at once) and dead-letter the part.
      await waitForLeaseEnd(
        db,
        partLeasePath(tenant, job, `${runId}-${request.part.index}`),
        Date.now() + parseDuration(deps.config.cloudRunBudget),
      );
      await publishRunRequests(await deps.clients.pubsub(), [request]);
      return { ack: true, ...answer };
    default:
      return { ack: true, ...answer };
  }
}

/**
 * A request Pub/Sub gave up on: its runs failed every delivery. Reported once as
 * `run-job-failure` with the last reason; the deployment stays `failed` until a run
 * completes (its next due time was kept by the failed runs). A part still ends its run.
 */
export async function handleDeadRunRequest(
  deps: AppDeps,
  request: RunRequest,
  attempts: number,
): Promise<void> {
  const db = await deps.clients.firestore();
  const deployment = (await jobsCollection(db, request.tenant).doc(request.job).get()).get(
    `deployments.${CLOUD_WORKER}`,
  ) as Deployment | undefined;
  if (!deployment) {
    if (request.part) await dropRun(deps, db, request, request.part.run);
    return;
  }
  let reason = deployment.error ?? 'the run failed';
  if (request.part) {
    const { tenant, job, part } = request;
    reason = (await runState(db, tenant, job, part.run)).error ?? reason;
    // Its run's totals must not wait for it any more.
    await endRunPart(deps, request, part.run, { failed: true, failed_parts: 1 }, (v) => v);
  }
  await appendEvent(db, request.tenant, {
    type: 'run-job-failure',
    source: 'worker',
    worker: CLOUD_WORKER,
    job: request.job,
    payload: {
      job: request.job,
      error: reason,
      // Not the error's text: viewers see `reason`, and the error quotes what the job was answered.
      reason: `the run failed ${attempts} times and was given up`,
      attempts,
    },
  });
}

/**
 * Adds a part's counts (or its run's own) to the run's; the last one records the
 * deployment's state, reports the run's `job-run-ended` with the totals, gives the job back
 * and requests the run's rest when it has one. A run dropped meanwhile frees the job once
 * nothing of it is read any more.
 */
async function endRunPart(
  deps: AppDeps,
  request: RunRequest,
  runId: string,
  counts: Record<string, unknown>,
  redact: Redactor,
  note: { rest?: boolean; error?: string } = {},
): Promise<void> {
  const db = await deps.clients.firestore();
  const part = request.part?.run === runId ? request.part.index : 'run';
  const end = await endShare(db, request.tenant, request.job, runId, part, counts, note);
  if (end.kind === 'gone') return await releaseIfIdle(deps, db, request, runId, false);
  if (end.kind === 'last') await finishRun(deps, db, request, runId, end, redact);
}

/** What the last share of a run does (endRunPart). */
async function finishRun(
  deps: AppDeps,
  db: Firestore,
  request: RunRequest,
  runId: string,
  end: Extract<ShareEnd, { kind: 'last' }>,
  redact: Redactor,
): Promise<void> {
  const { tenant, job } = request;
  const { totals } = end;
  // Unless another run took the job after the parts' hold lapsed: then the job is that run's.
  if ((await db.doc(leasePath(tenant, job)).get()).get('owner') === partsOwner(runId)) {
    const budgetMs = parseDuration(deps.config.cloudRunBudget);
    const version = end.version ?? request.version;
    const stalled = count(totals.stalled_parts);
    // The run's rest (its share cut at its budget, or by its runner's death), unless three
    // runs in a row and their parts read nothing.
    const stalls = end.rest ? nextStalls(end.stalls, count(totals.fingerprinted) > 0) : 0;
    const release = (nextDueMs: number | null | undefined) => () =>
      releaseJob(deps, { tenant, job }, partsOwner(runId), { version, nextDueMs });
    if (stalls >= STALL_LIMIT) {
      await reportGivenUp(
        db,
        tenant,
        job,
        stallReason(budgetMs, 'run'),
        budgetMs,
        release(end.facts.dueIfGivenUp),
      );
    } else if (!end.rest && stalled > 0) {
      await reportGivenUp(
        db,
        tenant,
        job,
        stallReason(budgetMs, { parts: stalled }),
        budgetMs,
        release(undefined),
      );
    } else {
      // The job is free again before anyone reads that its run ended.
      await release(undefined)();
      await recordCloudState(db, tenant, finalState(job, end));
      if (end.rest)
        await requestRuns(deps, [{ tenant, job, version, ...(stalls ? { stalls } : {}) }], 'continue');
    }
  }
  await appendEvent(db, tenant, {
    type: 'job-run-ended',
    source: 'job',
    worker: CLOUD_WORKER,
    job,
    payload: redact(totals),
  });
}

/** The deployment's state once a run read in parts has ended, from its totals. */
function finalState(job: string, end: Extract<ShareEnd, { kind: 'last' }>): DeploymentStateChange {
  const { totals } = end;
  if (totals.failed === true) {
    const failedParts = count(totals.failed_parts);
    const error =
      end.error ??
      (failedParts > 0
        ? `${failedParts} of the run's ${count(totals.parts)} parts failed and were given up`
        : 'the run failed');
    return { job, state: 'failed', error };
  }
  // Its rest carries on: idle between runs.
  if (end.rest) return { job, state: 'idle' };
  return { job, state: end.facts.runsOnce ? 'stopped' : 'idle' };
}

/** A part whose run no longer holds the job: not read (another run may be reading its objects). */
async function abandon(deps: AppDeps, request: PartRequest): Promise<RunAnswer> {
  await endRunPart(deps, request, request.part.run, { abandoned_parts: 1 }, (v) => v);
  return { ack: true, outcome: 'abandoned' };
}

/**
 * The run's job is no longer deployed (or deployed as another version than the run's): its
 * document goes, and its parts' hold once nothing of it is read any more (a part being read
 * now frees the job when it ends), so that the job deployed again runs at once.
 */
async function dropRun(deps: AppDeps, db: Firestore, request: RunRequest, runId: string): Promise<void> {
  const { tenant, job } = request;
  const { reading } = await runState(db, tenant, job, runId);
  await deleteRun(db, tenant, job, runId);
  await releaseIfIdle(deps, db, request, runId, reading);
}

/** Frees the job of a run that is gone, unless a part of it (or the run itself) is still read. */
async function releaseIfIdle(
  deps: AppDeps,
  db: Firestore,
  { tenant, job }: RunRequest,
  runId: string,
  runReading: boolean,
): Promise<void> {
  if (runReading) return;
  const lease = await db.doc(leasePath(tenant, job)).get();
  if (!lease.exists || lease.get('owner') !== partsOwner(runId)) return;
  if (await partsReading(db, tenant, job, runId)) return;
  // The tick looks at the job next (a version deployed meanwhile waits no longer).
  await releaseJob(deps, { tenant, job }, partsOwner(runId), { nextDueMs: undefined });
}

/**
 * What a request delivered again finds of its run, once the run's own share has shown
 * whether its runner lives. Pub/Sub delivers a request again about 10 s after its runner
 * died (the pull deadline; the push back-off starts at 10 s), while the run's mark of life
 * lasts a lease (15 s): taken as alive, the run's share never ended and the run never
 * reported. So a run that looks alive is watched for up to a lease and a second.
 */
async function priorRunSettled(
  deps: AppDeps,
  db: Firestore,
  request: RunRequest,
  runId: string,
): Promise<Awaited<ReturnType<typeof priorRun>>> {
  const until = Date.now() + parseDuration(deps.config.runLease) + 1_000;
  for (;;) {
    const prior = await priorRun(db, request.tenant, request.job, runId);
    if (prior !== 'running' || Date.now() >= until) return prior;
    await sleep(500);
  }
}

/** Deployed on `cloud` as the version the part's run read. */
function deployedAsRequested(doc: DocumentSnapshot, request: RunRequest): boolean {
  const deployment = doc.get(`deployments.${CLOUD_WORKER}`) as Deployment | undefined;
  return deployment !== undefined && deployment.version === request.version;
}

/**
 * A request that found its tenant at its cap and that nothing else requests again (a part,
 * a run notifications woke) waits parked, not in this runner (parked-runs.ts), and is
 * acknowledged: waiting is not a failed delivery (five of those would dead-letter it, and
 * it would be reported as a run that failed five times).
 */
async function park(db: Firestore, request: RunRequest, turn: Turn): Promise<RunAnswer> {
  await parkRun(db, request);
  turn.parked = true;
  return { ack: true, outcome: 'tenant-at-cap' };
}

/**
 * A slot of the tenant, renewed while held. Given back, it releases the tenant's oldest
 * parked request, if one waits.
 */
async function takeSlot(
  deps: AppDeps,
  db: Firestore,
  tenant: string,
  owner: string,
  turn: Turn,
): Promise<{ free(): Promise<void> } | undefined> {
  const leaseMs = parseDuration(deps.config.runLease);
  // Held like the job's lease: renewed while the request is in hand, so a runner that
  // dies gives its tenant's slot back within a lease.
  const taken = await takeRunSlot(db, tenant, owner, {
    cap: deps.config.tenantRunCap,
    untilMs: Date.now() + leaseMs,
  });
  if (!taken) return undefined;
  turn.slotTaken = true;
  const renewal = setInterval(() => {
    void taken.renew(Date.now() + leaseMs).catch(() => {});
  }, leaseMs / 3);
  let freed = false;
  return {
    // Before the rest of a run is requested: its own slot must not make it wait.
    async free() {
      if (freed) return;
      freed = true;
      clearInterval(renewal);
      await taken.free().catch(() => {});
      // A request left here is released by the next tick.
      await releaseParkedRun(deps, db, tenant).catch(() => {});
    },
  };
}

/** Waits until the lease at `path` is released or expired, or until `untilMs`. */
async function waitForLeaseEnd(db: Firestore, path: string, untilMs: number): Promise<void> {
  for (;;) {
    const lease = await db.doc(path).get();
    const expires = (lease.get('expires_at_ms') as number | undefined) ?? 0;
    if (!lease.exists || expires <= Date.now() || Date.now() >= untilMs) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function stoppedAtLimit(result: JobTickResult): boolean {
  return result.outcome === 'stopped-at-budget' || result.outcome === 'stopped-at-deadline';
}

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

const policies = new Map<string, EgressPolicy>();

/** One policy (and so one connection pool) per allow list, not one per run. */
function egressPolicyFor(allow: string[]): EgressPolicy {
  const key = allow.join(',');
  let policy = policies.get(key);
  if (!policy) {
    policy = new EgressPolicy(allow);
    policies.set(key, policy);
  }
  return policy;
}
