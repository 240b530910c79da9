/**
 * The built-in `cloud` worker: jobs deployed to it run inside the scheduled function
 * (Cloud Scheduler in the cloud, a tick of a few seconds in the local stack). Each tick
 * renders the deployed jobs for `cloud` and hands them to the scheduled runner, which
 * holds a lease per job and stops before the deadline; `print` output goes to stdout
 * (Cloud Logging), run reports to the event log.
 */

import type { EventType } from '../../shared/events/vocabulary.ts';
import type { AppDeps } from '../app/deps.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEvent } from '../events/event-log.ts';
import { renderForWorkers } from '../jobs/render-for-worker.ts';
import { type JobRecord, stagedContext } from '../jobs/store.ts';
import { createGcsInput } from '../runner/inputs/gcs/index.ts';
import { createHttpPollInput } from '../runner/inputs/http-poll/index.ts';
import { createPrintOutput } from '../runner/outputs/print/index.ts';
import type { Redactor } from '../runner/redact.ts';
import { withRunReports } from '../runner/run-reports.ts';
import { resolveRuntimeValues } from '../secrets/runtime-values.ts';
import { runScheduledTick, type ScheduledJob } from './tick.ts';

export const CLOUD_WORKER = 'cloud';

export async function cloudWorkerTick(deps: AppDeps, deadlineMs: number) {
  const db = await deps.clients.firestore();
  const contexts = new ContextStore(db);
  const output = createPrintOutput(process.stdout);
  const redactors = new Map<string, Redactor>();
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
            const input = {
              name: record.name,
              definition: JSON.parse(record.staged.definition_json),
              jobContext: stagedContext(record.staged),
            };
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
      outputFor: () => output,
      // gcs reports its own runs; http-poll gets the same run events through a wrapper.
      inputFor: (job) => {
        if (job.definition.input.gcs) return createGcsInput(job.definition.input.gcs);
        const httpPoll = job.definition.input['http-poll'];
        return httpPoll ? withRunReports(createHttpPollInput(httpPoll)) : undefined;
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
    { deadlineMs },
  );
}
