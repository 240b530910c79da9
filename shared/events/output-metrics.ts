/**
 * What a job's output delivered, summed from its `job-metrics` events: each run of a job
 * reports one with `output: <kind>` and the run's counts (functions/runner/run-output.ts).
 * The CLI (`sluice job get`, `sluice job ls`) and the web UI's job page show this.
 *
 * @example
 *   const byJob = outputMetricsByJob(events); // from GET /api/events?type=job-metrics&since=…
 *   byJob.get('copy')?.get('gcs')?.events;
 */

export const OUTPUT_METRIC_FIELDS = ['events', 'bytes', 'batches', 'retries', 'failures'] as const;
export type OutputMetricField = (typeof OUTPUT_METRIC_FIELDS)[number];

export type OutputMetricsSummary = Record<OutputMetricField, number> & {
  /** job-metrics events (runs) counted. */
  runs: number;
  /** Time of the newest of them. */
  last_report: string;
};

/** The window the summaries cover, and how it is named where they are shown. */
export const OUTPUT_METRICS_WINDOW_MS = 24 * 3_600_000;
export const OUTPUT_METRICS_WINDOW_LABEL = 'last 24 h';

interface MetricsEvent {
  type: string;
  job?: string;
  time: string;
  payload: Record<string, unknown>;
}

/** Job → output kind → sums, of the output reports among `events` (others are ignored). */
export function outputMetricsByJob(
  events: readonly MetricsEvent[],
): Map<string, Map<string, OutputMetricsSummary>> {
  const byJob = new Map<string, Map<string, OutputMetricsSummary>>();
  for (const event of events) {
    const kind = event.payload.output;
    if (event.type !== 'job-metrics' || typeof kind !== 'string' || !event.job) continue;
    const kinds = byJob.get(event.job) ?? new Map<string, OutputMetricsSummary>();
    byJob.set(event.job, kinds);
    const sum = kinds.get(kind) ?? {
      events: 0,
      bytes: 0,
      batches: 0,
      retries: 0,
      failures: 0,
      runs: 0,
      last_report: '',
    };
    kinds.set(kind, sum);
    for (const field of OUTPUT_METRIC_FIELDS) {
      const value = event.payload[field];
      if (typeof value === 'number' && Number.isFinite(value)) sum[field] += value;
    }
    sum.runs++;
    if (event.time > sum.last_report) sum.last_report = event.time;
  }
  return byJob;
}

/** The output kind a job definition names (`output: { gcs: {...} }` → `gcs`). */
export function outputKindOf(definition: unknown): string | undefined {
  const output = (definition as { output?: unknown } | undefined)?.output;
  if (typeof output !== 'object' || output === null) return undefined;
  return Object.keys(output).find((k) => (output as Record<string, unknown>)[k] !== undefined);
}
