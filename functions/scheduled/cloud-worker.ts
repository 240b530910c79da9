/**
 * The built-in `cloud` worker: jobs deployed to it run inside the scheduled function
 * (Cloud Scheduler in the cloud, a tick of a few seconds in the local stack). Each tick
 * renders the deployed jobs for `cloud` and hands them to the scheduled runner, which
 * holds a lease per job and stops before the deadline; outputs are built from their kinds
 * (`print` goes to stdout, Cloud Logging), run reports to the event log.
 *
 * The jobs of every tenant run here, in the control plane's own function, so a job gets
 * no more than its definition gives it: connections only where the egress policy allows
 * (`SLUICE_EGRESS_ALLOW`: none in the cloud), a `gcs` job only with its own key (never
 * the function's identity or files), and each run a time budget (`SLUICE_CLOUD_RUN_BUDGET`).
 */

import { parseDuration } from '../../shared/duration.ts';
import type { EventType } from '../../shared/events/vocabulary.ts';
import { cloudWorkerProblems } from '../../shared/job/cloud-worker-rules.ts';
import type { AppDeps } from '../app/deps.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEvent } from '../events/event-log.ts';
import { renderForWorkers } from '../jobs/render-for-worker.ts';
import { type JobRecord, stagedRenderInput } from '../jobs/store.ts';
import { inputFor } from '../runner/components.ts';
import { EgressPolicy } from '../runner/egress/policy.ts';
import { createPrintOutput } from '../runner/outputs/print/index.ts';
import type { Redactor } from '../runner/redact.ts';
import { resolveRuntimeValues } from '../secrets/runtime-values.ts';
import { runScheduledTick, type ScheduledJob } from './tick.ts';

export const CLOUD_WORKER = 'cloud';

export async function cloudWorkerTick(deps: AppDeps, deadlineMs: number) {
  const db = await deps.clients.firestore();
  const contexts = new ContextStore(db);
  const output = createPrintOutput(process.stdout);
  const redactors = new Map<string, Redactor>();
  const egress = egressPolicyFor(deps.config.egressAllow);
  return await runScheduledTick(
    {
      db,
      async jobs() {
        const snap = await db
          .collectionGroup('jobs')
          .where(`deployments.${CLOUD_WORKER}.version`, '>=', 0)
          .get();
        const rendered = await Promise.all(
          snap.docs.map(async (doc): Promise<ScheduledJob | undefined> => {
            const tenant = doc.ref.parent.parent!.id;
            const record = doc.data() as JobRecord;
            if (!record.staged) return undefined;
            const input = stagedRenderInput({ ...record, staged: record.staged });
            const [rendering] = await renderForWorkers(contexts, tenant, input, [CLOUD_WORKER]);
            if (!rendering!.result.ok) {
              await appendEvent(db, tenant, {
                type: 'job-errors',
                source: 'worker',
                worker: CLOUD_WORKER,
                job: record.name,
                payload: { reason: 'does not render', details: rendering!.result.errors },
              });
              return undefined;
            }
            // ${secret|...} and ${dyn|...}: resolved here, as a worker would, only for this run.
            const values = await resolveRuntimeValues(deps, db, tenant, rendering!.result.definition);
            if (!values.ok) {
              await appendEvent(db, tenant, {
                type: 'job-errors',
                source: 'worker',
                worker: CLOUD_WORKER,
                job: record.name,
                payload: { reason: `missing ${values.missing.join(', ')}` },
              });
              return undefined;
            }
            const problems = cloudWorkerProblems(values.definition);
            if (problems.length) {
              await appendEvent(db, tenant, {
                type: 'job-errors',
                source: 'worker',
                worker: CLOUD_WORKER,
                job: record.name,
                payload: { reason: `not run: ${problems[0]!.message}`, details: problems },
              });
              return undefined;
            }
            redactors.set(`${tenant}/${record.name}`, values.redact);
            return {
              tenant,
              name: record.name,
              version: record.staged.version,
              definition: values.definition,
            };
          }),
        );
        return rendered.filter((j): j is ScheduledJob => j !== undefined);
      },
      // Inputs and outputs are built from their kinds (components.ts); print goes to stdout.
      print: output,
      egress,
      inputFor: (job) => inputFor(job.definition, { egress }),
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
