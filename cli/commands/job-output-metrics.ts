/**
 * The output metrics `sluice job get` and `sluice job ls` show: the `job-metrics` events
 * of the last 24 hours (GET /api/events), summed per job and output kind by
 * shared/events/output-metrics.ts.
 *
 * A busy tenant's day can hold more reports than a command should read (each page is one
 * request of at most 1,000), so at most MAX_PAGES pages are read, newest first
 * (`order=newest`), and when the day does not fit, the NEWEST reports are the ones
 * counted: the answer then says from when it counts (`since`) and that it is partial
 * (`complete: false`), and the figures are lower bounds (shown as `≥`).
 *
 * @example
 *   const { byJob, complete, since } = await recentOutputMetrics(api, { job: 'copy' });
 */
import type { EventPage as EventsPage } from '../../shared/api/events.ts';
import {
  OUTPUT_METRICS_WINDOW_MS,
  type OutputMetricsSummary,
  outputMetricsByJob,
} from '../../shared/events/output-metrics.ts';
import type { ApiClient } from '../api-client.ts';

/** The most reports one GET /api/events answers (its `limit`, functions/events/routes.ts). */
const PAGE_MAX = 1000;
/** Pages read at most: about the newest 10,000 reports (a busy tenant's day stays a bounded request). */
const MAX_PAGES = 12;

type Report = EventsPage['events'][number];

export interface RecentOutputMetrics {
  /** Job → output kind → sums. */
  byJob: Map<string, Map<string, OutputMetricsSummary>>;
  /** When the counted reports start: 24 h ago when `complete`, later when not. */
  since: string;
  /** Every report of the window was counted; when false, only those from `since` on (the newest). */
  complete: boolean;
}

export async function recentOutputMetrics(
  api: ApiClient,
  filter: { job?: string } = {},
  now = Date.now(),
  limits: { pages: number; pageSize: number } = { pages: MAX_PAGES, pageSize: PAGE_MAX },
): Promise<RecentOutputMetrics> {
  const start = new Date(now - OUTPUT_METRICS_WINDOW_MS).toISOString();
  const reports: Report[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < limits.pages; pages++) {
    const answer = await api.get<EventsPage>('/api/events', {
      query: {
        type: 'job-metrics',
        job: filter.job,
        order: 'newest',
        since: start,
        limit: String(limits.pageSize),
        ...(cursor ? { cursor } : {}),
      },
    });
    reports.push(...answer.events);
    cursor = answer.next_cursor ?? undefined;
    if (!cursor) return { byJob: outputMetricsByJob(reports), since: start, complete: true };
  }
  // The day did not fit: what is counted starts after the oldest millisecond read, whose
  // reports may go on in the next page.
  const oldest = reports.at(-1)!.time;
  const whole = reports.filter((r) => r.time > oldest);
  return whole.length
    ? {
        byJob: outputMetricsByJob(whole),
        since: new Date(Date.parse(oldest) + 1).toISOString(),
        complete: false,
      }
    : { byJob: outputMetricsByJob(reports), since: oldest, complete: false };
}

/**
 * One line for a table cell: `1200 events, 3 batches, 0 retries, 0 failures`; with `partial`
 * (only the newest reports were read) each count is a lower bound: `≥1200 events, ...`.
 */
export function metricsCell(summary: OutputMetricsSummary | undefined, partial = false): string {
  const at = partial ? '≥' : '';
  if (!summary) return partial ? `${at}0 events` : '-';
  return `${at}${summary.events} events, ${at}${summary.batches} batches, ${at}${summary.retries} retries, ${at}${summary.failures} failures`;
}
