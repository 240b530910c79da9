/**
 * The output metrics `sluice job get` and `sluice job ls` show: the `job-metrics` events
 * of the last 24 hours (GET /api/events), summed per job and output kind by
 * shared/events/output-metrics.ts.
 *
 * @example
 *   const byJob = await recentOutputMetrics(api, { job: 'copy' });
 */
import type { EventPage as EventsPage } from '../../shared/api/events.ts';
import {
  OUTPUT_METRICS_WINDOW_MS,
  type OutputMetricsSummary,
  outputMetricsByJob,
} from '../../shared/events/output-metrics.ts';
import type { ApiClient } from '../api-client.ts';

/** Pages read at most (1000 reports each): a busy tenant's day stays a bounded request. */
const MAX_PAGES = 10;

export async function recentOutputMetrics(
  api: ApiClient,
  filter: { job?: string } = {},
  now = Date.now(),
): Promise<Map<string, Map<string, OutputMetricsSummary>>> {
  const since = new Date(now - OUTPUT_METRICS_WINDOW_MS).toISOString();
  const events: EventsPage['events'] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await api.get<EventsPage>('/api/events', {
      query: { type: 'job-metrics', job: filter.job, limit: '1000', ...(cursor ? { cursor } : { since }) },
    });
    events.push(...answer.events);
    cursor = answer.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return outputMetricsByJob(events);
}

/** One line for a table cell: `1200 events, 3 batches, 0 failures`. */
export function metricsCell(summary: OutputMetricsSummary | undefined): string {
  if (!summary) return '-';
  return `${summary.events} events, ${summary.batches} batches, ${summary.retries} retries, ${summary.failures} failures`;
}
