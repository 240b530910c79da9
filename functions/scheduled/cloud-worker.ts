/**
 * The built-in `cloud` worker: jobs deployed to it run inside the scheduled function
 * (Cloud Scheduler in the cloud, a tick of a few seconds in the local stack). Each tick
 * renders the deployed jobs for `cloud` and hands them to the scheduled runner, which
 * holds a lease per job and stops before the deadline; outputs are built from their kinds
 * (`print` goes to stdout, Cloud Logging), run reports to the event log. The deployment
 * states show what a worker's heartbeat would: `running` during a run, `idle` between
 * runs, `failed` with the reason.
 *
 * The jobs of every tenant run here, in the control plane's own function, so a job gets
 * no more than its definition gives it: connections only where the egress policy allows
 * (`SLUICE_EGRESS_ALLOW`: none in the cloud), a `gcs` job only with its own key (never
 * the function's identity or files), and each run a time budget (`SLUICE_CLOUD_RUN_BUDGET`).
 */

import type { Firestore } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { EventType } from '../../shared/events/vocabulary.ts';
import { cloudWorkerProblems } from '../../shared/job/cloud-worker-rules.ts';
import { triggerOf } from '../../shared/job/schema.ts';
import { collectionGroup } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEvent } from '../events/event-log.ts';
import { type DeploymentStateChange, recordDeploymentStates, renderStaged } from '../jobs/deployments.ts';
import { type Deployment, type JobRecord, jobsCollection } from '../jobs/store.ts';
import { inputFor } from '../runner/components.ts';
import { EgressPolicy } from '../runner/egress/policy.ts';
import { createPrintOutput } from '../runner/outputs/print/index.ts';
import type { Redactor } from '../runner/redact.ts';
import { resolveRuntimeValues } from '../secrets/runtime-values.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';
import { type JobTickResult, runScheduledTick, type ScheduledJob } from './tick.ts';

/** Why a deployed job could not run this tick, to record as its deployment's `failed` state. */
type NotRun = { tenant: string; job: string; reason: string };

export async function cloudWorkerTick(deps: AppDeps, deadlineMs: number) {
  const db = await deps.clients.firestore();
  const contexts = new ContextStore(db);
  const output = createPrintOutput(process.stdout);
  const redactors = new Map<string, Redactor>();
  const egress = egressPolicyFor(deps.config.egressAllow);
  const notRun: NotRun[] = [];
  /** Jobs without a trigger run once: after that run they are `stopped`, as on any worker. */
  const runOnce = new Set<string>();
  /** The deployed version of each job the tick looked at, to keep its next due time with. */
  const versions = new Map<string, number>();
  const refuse = async (tenant: string, job: string, reason: string, details?: unknown) => {
    notRun.push({ tenant, job, reason });
    await appendEvent(db, tenant, {
      type: 'job-errors',
      source: 'worker',
      worker: CLOUD_WORKER,
      job,
      payload: { reason, ...(details ? { details } : {}) },
    });
  };
  const results = await runScheduledTick(
    {
      db,
      async jobs() {
        // Only the deployment is read of every job; the rest only of those the tick must look at.
        const snap = await collectionGroup(db, 'jobs')
          .where(`deployments.${CLOUD_WORKER}.version`, '>=', 0)
          .select(`deployments.${CLOUD_WORKER}`)
          .get();
        const now = Date.now();
        const looked = snap.docs.filter((doc) => {
          const next = (doc.get(`deployments.${CLOUD_WORKER}`) as Deployment | undefined)?.next_due_ms;
          return next === undefined || (next !== null && next <= now);
        });
        const records = looked.length ? await db.getAll(...looked.map((doc) => doc.ref)) : [];
        const rendered = await Promise.all(
          records.map(async (doc): Promise<ScheduledJob | undefined> => {
            const tenant = doc.ref.parent.parent!.id;
            const record = doc.data() as JobRecord | undefined;
            // Undeployed since the query.
            if (!record?.deployments?.[CLOUD_WORKER]) return undefined;
            versions.set(`${tenant}/${record.name}`, record.deployments[CLOUD_WORKER].version);
            const staged = await renderStaged(contexts, tenant, record, CLOUD_WORKER);
            if (!staged.ok) {
              const reason = `not run: ${staged.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`;
              await refuse(tenant, record.name, reason, staged.errors);
              return undefined;
            }
            // ${secret|...} and ${dyn|...}: resolved here, as a worker would, only for this run.
            const values = await resolveRuntimeValues(deps, db, tenant, staged.definition);
            if (!values.ok) {
              await refuse(tenant, record.name, `missing ${values.missing.join(', ')}`);
              return undefined;
            }
            // Again once secrets are in: a key from a secret must still be a key, not a path.
            const problems = cloudWorkerProblems(values.definition);
            if (problems.length) {
              await refuse(tenant, record.name, `not run: ${problems[0]!.message}`, problems);
              return undefined;
            }
            redactors.set(`${tenant}/${record.name}`, values.redact);
            if (!triggerOf(values.definition)) runOnce.add(`${tenant}/${record.name}`);
            return { tenant, name: record.name, version: staged.version, definition: values.definition };
          }),
        );
        return rendered.filter((j): j is ScheduledJob => j !== undefined);
      },
      // Inputs and outputs are built from their kinds (components.ts); print goes to stdout.
      print: output,
      egress,
      inputFor: (job) => inputFor(job.definition, { egress }),
      async runStarting(job) {
        await recordCloudStates(db, [{ tenant: job.tenant, job: job.name, state: 'running' }]);
      },
      report(job, report) {
        void appendEvent(db, job.tenant, {
          type: report.type as EventType,
          source: 'job',
          worker: CLOUD_WORKER,
          job: job.name,
          payload: (redactors.get(`${job.tenant}/${job.name}`) ?? ((v) => v))(report.payload),
        }).catch((err) => deps.logger.warn({ err }, 'could not record a run event'));
      },
    },
    { deadlineMs, runBudgetMs: parseDuration(deps.config.cloudRunBudget) },
  );
  await recordCloudStates(db, [
    ...notRun.map(({ tenant, job, reason }) => ({ tenant, job, state: 'failed' as const, error: reason })),
    ...results.flatMap((result) => stateAfter(result, runOnce.has(`${result.tenant}/${result.job}`)) ?? []),
  ]).catch((err) => deps.logger.warn({ err }, "could not record the cloud worker's deployment states"));
  await recordNextDue(db, results, versions).catch((err) =>
    deps.logger.warn({ err }, "could not record when the cloud worker's jobs are due"),
  );
  return results;
}

/**
 * Keeps each looked-at job's next due time beside its `cloud` deployment, so later ticks
 * skip it unread until then. Only onto the version the tick looked at: a job staged or
 * undeployed meanwhile keeps what the lifecycle wrote (no due time: looked at next tick).
 */
async function recordNextDue(
  db: Firestore,
  results: JobTickResult[],
  versions: Map<string, number>,
): Promise<void> {
  const { FieldPath } = await import('@google-cloud/firestore');
  const due = results.filter((r) => r.nextDueMs !== undefined && versions.has(`${r.tenant}/${r.job}`));
  for (let i = 0; i < due.length; i += NEXT_DUE_WRITES_AT_ONCE) {
    await Promise.all(
      due.slice(i, i + NEXT_DUE_WRITES_AT_ONCE).map((result) =>
        db.runTransaction(async (tx) => {
          const ref = jobsCollection(db, result.tenant).doc(result.job);
          const deployment = ((await tx.get(ref)).data() as JobRecord | undefined)?.deployments?.[
            CLOUD_WORKER
          ];
          if (!deployment || deployment.version !== versions.get(`${result.tenant}/${result.job}`)) return;
          if (deployment.next_due_ms === result.nextDueMs) return;
          tx.update(ref, new FieldPath('deployments', CLOUD_WORKER, 'next_due_ms'), result.nextDueMs);
        }),
      ),
    );
  }
}

/** Next-due writes in flight at once after a tick. */
const NEXT_DUE_WRITES_AT_ONCE = 20;

type CloudState = DeploymentStateChange & { tenant: string };

/**
 * The state a deployment on `cloud` shows after this tick, as a worker's heartbeat would
 * report it: `idle` between runs (also when not due yet, or stopped by the deadline or its
 * budget and carrying on next tick), `stopped` once a job without a trigger has had its one
 * run, `failed` with the reason. A run leased by another invocation is that invocation's to
 * record.
 */
function stateAfter(result: JobTickResult, runsOnce: boolean): CloudState | undefined {
  const base = { tenant: result.tenant, job: result.job };
  switch (result.outcome) {
    case 'completed':
    case 'not-due':
      return { ...base, state: runsOnce ? 'stopped' : 'idle' };
    case 'stopped-at-deadline':
    case 'stopped-at-budget':
      return { ...base, state: 'idle' };
    case 'failed':
      return { ...base, state: 'failed', error: result.error ?? 'the run failed' };
    case 'skipped':
      return { ...base, state: 'failed', error: 'not runnable on the cloud worker' };
    case 'leased-elsewhere':
      return undefined;
  }
}

/** One transaction per tenant: states only change when they differ (see recordDeploymentStates). */
async function recordCloudStates(db: Firestore, states: CloudState[]): Promise<void> {
  const byTenant = new Map<string, DeploymentStateChange[]>();
  for (const { tenant, ...change } of states) {
    if (!tenant || !change.job) continue;
    byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), change]);
  }
  await Promise.all(
    [...byTenant].map(([tenant, changes]) =>
      db.runTransaction((tx) => recordDeploymentStates(db, tenant, CLOUD_WORKER, changes, tx)),
    ),
  );
}

const policies = new Map<string, EgressPolicy>();

/** One policy (and so one connection pool) per allow list, not one per tick. */
function egressPolicyFor(allow: string[]): EgressPolicy {
  const key = allow.join(',');
  let policy = policies.get(key);
  if (!policy) {
    policy = new EgressPolicy(allow);
    policies.set(key, policy);
  }
  return policy;
}
