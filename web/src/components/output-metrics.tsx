/**
 * A job's output on its page: the kind its definition names, and what it delivered in
 * the last 24 hours, summed from the `job-metrics` events its runs reported (events,
 * bytes, batches, retries, failures, runs, the newest report): the newest 1,000 reports,
 * one request, and it says so when the day held more.
 */
import { useState } from 'preact/hooks';
import {
  OUTPUT_METRICS_WINDOW_LABEL,
  OUTPUT_METRICS_WINDOW_MS,
  outputMetricsByJob,
} from '../../../shared/events/output-metrics.ts';
import { enc } from '../api.ts';
import { REFRESH_MS, useApi } from '../lib/use-api.ts';
import { ErrorMessage } from './error-message.tsx';
import { formatTime } from './events-table.tsx';

interface EventsPage {
  events: { type: string; job?: string; time: string; payload: Record<string, unknown> }[];
  next_cursor: string | null;
}

export function OutputMetrics({ job, kind }: { job: string; kind: string | undefined }) {
  // Fixed when the page opens, so the refreshing request keeps one path.
  const [since] = useState(() => new Date(Date.now() - OUTPUT_METRICS_WINDOW_MS).toISOString());
  const reports = useApi<EventsPage>(
    `/api/events?type=job-metrics&job=${enc(job)}&since=${enc(since)}&order=newest&limit=1000`,
    undefined,
    { refreshMs: REFRESH_MS },
  );
  const sum = kind && reports.data ? outputMetricsByJob(reports.data.events).get(job)?.get(kind) : undefined;
  return (
    <section class="output-metrics" aria-labelledby="output-heading">
      <h2 id="output-heading">Output</h2>
      <ErrorMessage error={reports.error} />
      <dl class="metrics">
        <dt>Kind</dt>
        <dd>
          <code>{kind ?? 'none'}</code>
        </dd>
        {sum ? (
          <>
            <dt>Events ({OUTPUT_METRICS_WINDOW_LABEL})</dt>
            <dd data-metric="events">{sum.events}</dd>
            <dt>Bytes</dt>
            <dd data-metric="bytes">{sum.bytes}</dd>
            <dt>Batches</dt>
            <dd data-metric="batches">{sum.batches}</dd>
            <dt>Retries</dt>
            <dd data-metric="retries">{sum.retries}</dd>
            <dt>Failures</dt>
            <dd data-metric="failures">{sum.failures}</dd>
            <dt>Runs</dt>
            <dd data-metric="runs">
              {sum.runs}
              {reports.data?.next_cursor ? ' (only the newest 1000 reports are counted)' : ''}
            </dd>
            <dt>Last report</dt>
            <dd>{formatTime(sum.last_report)}</dd>
          </>
        ) : (
          reports.data && (
            <>
              <dt>Metrics</dt>
              <dd data-metric="none">no runs reported in the {OUTPUT_METRICS_WINDOW_LABEL}</dd>
            </>
          )
        )}
      </dl>
    </section>
  );
}
