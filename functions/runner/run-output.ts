/**
 * An output bound to the runs of one job: what a run context needs of it (JSON lines,
 * `acknowledge`, `perUnit`), and the end of each run, which waits for the output to
 * acknowledge everything (before a trigger's watermark moves on) and reports the run's
 * `job-metrics` for the output (events, bytes, batches, retries, failures).
 *
 * @example
 *   const bound = bindOutput(built, report);
 *   await input.run({ ...ctx, ...bound.context }, bound.deliver);
 *   await bound.endRun();
 */
import type { BuiltOutput } from './components.ts';
import {
  type DeliveryUnit,
  jsonLinesTo,
  newOutputMetrics,
  type OutputMetrics,
  type RunContext,
  type RunEvent,
  type RunReport,
} from './types.ts';

export interface BoundOutput {
  context: Pick<RunContext, 'deliverJsonLines' | 'acknowledge' | 'perUnit'>;
  deliver(events: RunEvent[], unit?: DeliveryUnit): Promise<void>;
  /** Acknowledges everything of the run (unless it failed) and reports the output's metrics. */
  endRun(options?: { failed?: boolean }): Promise<void>;
}

export function bindOutput(built: BuiltOutput, report: (report: RunReport) => void): BoundOutput {
  const { output, metrics, kind } = built;
  const deliverJsonLines = jsonLinesTo(output);
  let reported: OutputMetrics = newOutputMetrics();
  return {
    context: {
      ...(deliverJsonLines ? { deliverJsonLines } : {}),
      ...(output.acknowledge ? { acknowledge: (units) => output.acknowledge!(units) } : {}),
      ...(output.perUnit ? { perUnit: true } : {}),
    },
    deliver: (events, unit) => output.write(events, unit),
    async endRun(options = {}) {
      try {
        if (!options.failed) await output.acknowledge?.();
      } finally {
        const now = { ...metrics };
        const delta = Object.fromEntries(
          Object.entries(now).map(([k, v]) => [k, v - reported[k as keyof OutputMetrics]]),
        );
        reported = now;
        report({ type: 'job-metrics', payload: { output: kind, ...delta } });
      }
    },
  };
}
