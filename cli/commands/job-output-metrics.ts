/**
 * The output metrics `sluice job get` and `sluice job ls` show: the `job-metrics` events
 * of the last 24 hours (GET /api/events), summed per job and output kind by
 * shared/events/output-metrics.ts.
 *
 * A busy tenant's day can hold more reports than a command should read (each page is one
 * request of at most 1,000), so at most MAX_PAGES pages are read, and when the day does
 * not fit, the NEWEST reports are the ones counted: the answer then says from when it
 * counts (`since`) and that it is partial (`complete: false`), and the figures are lower
 * bounds (shown as `≥`). The log pages forward only (oldest first), so after a first page
 * from 24 h ago shows the day does not fit in one page, it is read back from now in
 * windows sized by the rate of the reports seen, each read from its start up to where the
 * newer one began, until the day is read or the pages run out.
 *
 * @example
 *   const { byJob, complete, since } = await recentOutputMetrics(api, { job: 'copy' });
 */
import type { EventPage as EventsPage } from '../../shared/api/events.ts';
import { eventIdTime } from '../../shared/events/event-id.ts';
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

/** The first window read back from now spans at most this; each later one at most WINDOW_GROWTH times the one before. */
const FIRST_SPAN_MS = 3_600_000;
const WINDOW_GROWTH = 8;

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
  const start = now - OUTPUT_METRICS_WINDOW_MS;
  let pagesLeft = limits.pages;
  const page = async (from: { since: number } | { cursor: string }) => {
    pagesLeft--;
    const answer = await api.get<EventsPage>('/api/events', {
      query: {
        type: 'job-metrics',
        job: filter.job,
        limit: String(limits.pageSize),
        ...('cursor' in from ? { cursor: from.cursor } : { since: new Date(from.since).toISOString() }),
      },
    });
    return { events: answer.events, cursor: answer.next_cursor ?? undefined };
  };
  /**
   * The reports of the window [from, before), from its first page; or, when its end is out
   * of reach (the pages run out, or those read so far show it needs more than `allowed`),
   * how dense the newest page read was (reports a millisecond), to size a narrower one.
   */
  const readWindow = async (
    first: { events: Report[]; cursor: string | undefined },
    from: number,
    before: number,
    allowed: number,
  ): Promise<{ reports: Report[] } | { rate: number }> => {
    const end = eventIdTime(new Date(before));
    const reports: Report[] = [];
    let got = first;
    for (let pages = 1; ; pages++) {
      for (const report of got.events) {
        if (report.id >= end) return { reports };
        reports.push(report);
      }
      if (!got.cursor) return { reports };
      const covered = Date.parse(got.events.at(-1)!.time) - from;
      const needed = (pages * (before - from)) / Math.max(1, covered);
      if (pagesLeft <= 0 || needed > allowed + 0.5) return { rate: rateOf(got.events) };
      got = await page({ cursor: got.cursor });
    }
  };
  const result = (reports: Report[], since: number, complete: boolean): RecentOutputMetrics => ({
    byJob: outputMetricsByJob(reports),
    since: new Date(since).toISOString(),
    complete,
  });

  const first = await page({ since: start });
  if (!first.cursor) return result(first.events, start, true);

  // The day does not fit in one page: back from now, window by window, newest first.
  // Reports made after `now` are left to the next look.
  const firstEnd = Date.parse(first.events.at(-1)!.time);
  let rate = rateOf(first.events);
  let counted: Report[] = [];
  let before = now + 1;
  // The first window aims at one page, and spans at most FIRST_SPAN_MS (its rate is a
  // guess from the oldest reports); later ones at most WINDOW_GROWTH times wider.
  let target = limits.pageSize;
  let widest = FIRST_SPAN_MS;
  while (pagesLeft > 0) {
    let from = Math.max(start, Math.floor(before - Math.min(target / rate, widest)));
    let read: { reports: Report[] } | { rate: number };
    if (from <= firstEnd) {
      // What is left reaches the first page: go on from it.
      from = start;
      read = await readWindow(first, start, before, pagesLeft + 1);
    } else {
      const allowed = pagesLeft;
      read = await readWindow(await page({ since: from }), from, before, allowed);
    }
    if ('rate' in read) {
      // Denser than it looked: again, narrower, from the same end.
      rate = Math.max(rate * 2, read.rate);
      widest = (before - from) / 2;
      target = Math.max(1, pagesLeft - 1) * limits.pageSize * 0.75;
      continue;
    }
    counted = counted.concat(read.reports);
    if (from === start) return result(counted, start, true);
    rate = Math.max(1, read.reports.length) / (before - from);
    widest = (before - from) * WINDOW_GROWTH;
    before = from;
    // The pages left but one (the page that crosses a window's end is read too), with room
    // for the rate to rise.
    target = Math.max(1, pagesLeft - 1) * limits.pageSize * 0.75;
  }
  return result(counted, Math.min(before, now), false);
}

/** Reports a millisecond in a run of them, oldest first (at least one over their span). */
function rateOf(reports: Report[]): number {
  if (reports.length < 2) return 1 / OUTPUT_METRICS_WINDOW_MS;
  const span = Date.parse(reports.at(-1)!.time) - Date.parse(reports[0]!.time);
  return reports.length / Math.max(1, span);
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
