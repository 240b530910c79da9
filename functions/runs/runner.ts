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
 *   delayed, not dropped), stopped at its budget (the rest is requested again at once);
 * - retry: the run failed. Pub/Sub delivers it again with back-off; the fifth failure sends it
 *   to the dead-letter topic, and `handleDeadRunRequest` reports `run-job-failure`.
 *
 * A `gcs` run that finds more than `SLUICE_SHARD_OBJECTS` objects to read hands the rest
 * to other runners as part requests (shards.ts); a part waits for a slot of its tenant
 * rather than for the next tick, reads its objects under a lease of its own, and its
 * counts go into its run's one `job-run-ended`.
 *
 * Delivered twice at once, a request runs once: the second delivery finds the lease
 * taken. Delivered again after its run, it finds the job not due. A runner that dies
 * mid-run leaves its objects unfingerprinted and its lease expiring within `leaseMs`;
 * Pub/Sub delivers the request again and the run carries on from the fingerprints.
 *
 * @example
 *   const answer = await handleRunRequest(deps, request, { owner: 'runner-1' });
 *   answer.ack ? message.ack() : message.nack();
 */
import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { EventType } from '../../shared/events/vocabulary.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { leasePath } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEvent } from '../events/event-log.ts';
import { type Deployment, jobsCollection } from '../jobs/store.ts';
import { inputFor } from '../runner/components.ts';
import { EgressPolicy } from '../runner/egress/policy.ts';
import { createPrintOutput } from '../runner/outputs/print/index.ts';
import type { Redactor } from '../runner/redact.ts';
import type { Output } from '../runner/types.ts';
import { releaseLease } from '../scheduled/lease.ts';
import {
  type JobTickOutcome,
  type JobTickResult,
  runScheduledJob,
  type ScheduledJob,
} from '../scheduled/tick.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';
import { renderCloudJob } from './cloud-job.ts';
import { recordCloudState, recordNextDue, stateAfter } from './cloud-states.ts';
import { requestHorizonMs, requestRuns } from './dispatch.ts';
import { publishRunRequests } from './run-channel.ts';
import { endPart, partsOwner, RunParts } from './shards.ts';
import { type RunSlot, takeRunSlot } from './tenant-slots.ts';
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
  outcome: JobTickOutcome | 'not-deployed' | 'refused' | 'tenant-at-cap';
  result?: JobTickResult;
}

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
  const { tenant, job } = request;
  const doc = await jobsCollection(db, tenant).doc(job).get();
  const deployment = doc.get(`deployments.${CLOUD_WORKER}`) as Deployment | undefined;
  if (!deployment) return { ack: true, outcome: 'not-deployed' };
  const { version } = deployment;
  const budgetMs = parseDuration(deps.config.cloudRunBudget);
  const leaseMs = parseDuration(deps.config.runLease);
  const run = `${context.owner}.${randomUUID()}`;
  // Held like the job's lease: renewed while the request is in hand, so a runner that
  // dies gives its tenant's slot back within a lease.
  const slot = { cap: deps.config.tenantRunCap, untilMs: Date.now() + leaseMs };
  const { part } = request;
  // A part waits for a slot (its run holds the job meanwhile), and so does a run that
  // notifications woke (the tick would not request it again); a run waits for the next tick.
  const waits = part !== undefined || request.reason === 'notified';
  const slotTaken = waits
    ? await waitForRunSlot(db, tenant, run, { cap: slot.cap, leaseMs }, budgetMs)
    : await takeRunSlot(db, tenant, run, slot);
  if (!slotTaken) {
    if (waits) return { ack: false, outcome: 'tenant-at-cap' };
    await recordNextDue(db, tenant, job, version, undefined);
    return { ack: true, outcome: 'tenant-at-cap' };
  }
  const renewal = setInterval(() => {
    void slotTaken.renew(Date.now() + leaseMs).catch(() => {});
  }, leaseMs / 3);
  let slotFreed = false;
  /** Before the rest of a run is requested: its own slot must not make it wait. */
  const freeSlot = async () => {
    if (slotFreed) return;
    slotFreed = true;
    clearInterval(renewal);
    await slotTaken.free().catch(() => {});
  };
  try {
    const rendered = await renderCloudJob(deps, db, new ContextStore(db), doc);
    if (!rendered.ok) {
      if (rendered.reason === undefined) return { ack: true, outcome: 'not-deployed' };
      await recordCloudState(db, tenant, { job, state: 'failed', error: rendered.reason });
      await recordNextDue(db, tenant, job, version, undefined);
      return { ack: true, outcome: 'refused' };
    }
    const egress = egressPolicyFor(deps.config.egressAllow);
    const deadlineMs = Date.now() + budgetMs + RUN_MARGIN_MS;
    const threshold = deps.config.shardObjects;
    const parts = part ? undefined : new RunParts(deps, db, { tenant, job, version }, threshold);
    const scheduled: ScheduledJob = part
      ? {
          ...rendered.job,
          partId: `${part.run}-${part.index}`,
          shards: {
            threshold,
            part: part.objects,
            request: () => Promise.reject(new Error('a part hands nothing over')),
          },
        }
      : {
          ...rendered.job,
          shards: parts!.control,
          ...(request.reason === 'notified' ? { woken: true } : {}),
        };
    /** A sharded run's `job-run-ended` comes once, with the totals of its parts (shards.ts). */
    let ended: Record<string, unknown> | undefined;
    const result = await runScheduledJob(
      {
        db,
        print: context.print ?? createPrintOutput(process.stdout),
        egress,
        // A job woken by notifications reads what is waiting, then ends when quiet.
        inputFor: (scheduled) =>
          inputFor(scheduled.definition, { egress, gcs: { notificationsEndWhenQuiet: true } }),
        owner: run,
        leaseMs,
        async runStarting() {
          await recordCloudState(db, tenant, { job, state: 'running' });
        },
        leaseAfterRun: () => {
          if (parts && parts.count > 0)
            return { owner: parts.leaseOwner, untilMs: Date.now() + requestHorizonMs(deps) };
          // The run keeps the job until it has recorded what it leaves (afterRun, releaseJob).
          return part ? undefined : { owner: run, untilMs: Date.now() + leaseMs };
        },
        report(_job, report) {
          if (part && report.type === 'job-run-started') return;
          if (report.type === 'job-run-ended' && (part || (parts?.count ?? 0) > 0)) {
            ended = report.payload as Record<string, unknown>;
            return;
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
      scheduled,
      { deadlineMs, marginMs: STOP_MARGIN_MS, runBudgetMs: budgetMs },
    );
    await freeSlot();
    if (part) return await afterPart(deps, request, part.run, result, ended, rendered.redact);
    if (parts && parts.count > 0)
      await endRunPart(deps, request, parts.runId, ended ?? { failed: true }, rendered.redact);
    // The reason of a failed run quotes what the job was given: its secrets' values too.
    const state = stateAfter(result, rendered.runsOnce);
    if (state) await recordCloudState(db, tenant, rendered.redact(state));
    // A run read in parts is looked at again when its last part ends (endRunPart).
    return await afterRun(deps, request, { version, owner: run }, result, (parts?.count ?? 0) > 0);
  } catch (err) {
    // The job is not held until its lease lapses: the request comes again and runs it.
    await releaseLease(db, leasePath(tenant, job), run).catch(() => {});
    throw err;
  } finally {
    await freeSlot();
  }
}

/**
 * Records what a run leaves (its next due time, or its rest requested), gives the job's
 * lease back (`owner`'s, kept since the run ended) and answers Pub/Sub.
 */
async function afterRun(
  deps: AppDeps,
  { tenant, job }: RunRequest,
  { version, owner }: { version: number; owner: string },
  result: JobTickResult,
  sharded: boolean,
): Promise<RunAnswer> {
  const db = await deps.clients.firestore();
  const answer = { outcome: result.outcome, result };
  switch (result.outcome) {
    case 'leased-elsewhere':
      // Looked at again when that lease ends; the run holding it records its own next due time.
      await recordNextDueAtLeaseEnd(deps, { tenant, job }, version);
      return { ack: true, ...answer };
    case 'stopped-at-budget':
    case 'stopped-at-deadline':
      // Free before its rest is requested, or the rest would find the job leased.
      await releaseLease(db, leasePath(tenant, job), owner);
      await requestRuns(deps, [{ tenant, job, version }], 'continue');
      return { ack: true, ...answer };
    case 'failed':
      // Pub/Sub delivers it again; the job's schedule goes on meanwhile.
      await releaseJob(deps, { tenant, job }, owner, {
        version,
        nextDueMs: result.nextDueMs ?? Date.now() + requestHorizonMs(deps),
      });
      return { ack: false, ...answer };
    default:
      // A run read in parts handed the lease to its parts (endRunPart).
      if (!sharded) await releaseJob(deps, { tenant, job }, owner, { version, nextDueMs: result.nextDueMs });
      return { ack: true, ...answer };
  }
}

/** A part read: its counts go to its run; stopped at its budget, its rest is requested again. */
async function afterPart(
  deps: AppDeps,
  request: RunRequest,
  runId: string,
  result: JobTickResult,
  ended: Record<string, unknown> | undefined,
  redact: Redactor,
): Promise<RunAnswer> {
  const answer = { outcome: result.outcome, result };
  switch (result.outcome) {
    case 'completed':
      await endRunPart(deps, request, runId, ended ?? {}, redact);
      return { ack: true, ...answer };
    case 'stopped-at-budget':
    case 'stopped-at-deadline':
      // The objects it read are fingerprinted: the same part again reads the rest.
      await publishRunRequests(await deps.clients.pubsub(), [{ ...request, requested_ms: Date.now() }]);
      return { ack: true, ...answer };
    default:
      return { ack: result.outcome !== 'failed', ...answer };
  }
}

/**
 * A request Pub/Sub gave up on: its runs failed every delivery. Reported once as
 * `run-job-failure` with the last reason; the deployment stays `failed` until a run
 * completes (its next due time was kept by the failed runs).
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
  if (!deployment) return;
  const reason = deployment.error ?? 'the run failed';
  // Its run's totals must not wait for it any more.
  if (request.part)
    await endRunPart(deps, request, request.part.run, { failed: true, failed_parts: 1 }, (v) => v);
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
 * Adds a part's counts (or its run's own) to the run's; the last one reports the run's
 * `job-run-ended` with the totals, gives the job's lease back and has the job looked at on
 * the next tick.
 */
async function endRunPart(
  deps: AppDeps,
  request: RunRequest,
  runId: string,
  counts: Record<string, unknown>,
  redact: Redactor,
): Promise<void> {
  const db = await deps.clients.firestore();
  const part = request.part?.run === runId ? request.part.index : 'run';
  const totals = await endPart(db, request.tenant, request.job, runId, part, counts);
  if (!totals) return;
  // The job is free again before anyone reads that its run ended.
  await releaseJob(deps, request, partsOwner(runId), { nextDueMs: undefined });
  await appendEvent(db, request.tenant, {
    type: 'job-run-ended',
    source: 'job',
    worker: CLOUD_WORKER,
    job: request.job,
    payload: redact(totals),
  });
}

/** Waits up to `waitMs` for a slot of the tenant. */
async function waitForRunSlot(
  db: Firestore,
  tenant: string,
  owner: string,
  slot: { cap: number; leaseMs: number },
  waitMs: number,
): Promise<RunSlot | undefined> {
  const until = Date.now() + waitMs;
  for (;;) {
    const taken = await takeRunSlot(db, tenant, owner, { cap: slot.cap, untilMs: Date.now() + slot.leaseMs });
    if (taken) return taken;
    if (Date.now() > until) return undefined;
    await new Promise((r) => setTimeout(r, 250));
  }
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
