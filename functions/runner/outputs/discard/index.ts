/**
 * The `discard` output: counts events and bytes and drops them (benchmarks, dry runs).
 * Takes JSON lines as they are, so a benchmark measures the input, not serialization.
 * `bytes` is what `print` would have written: the events as JSON lines, in UTF-8.
 *
 * @example
 *   const output = createDiscardOutput(metrics);
 */
import type { JsonLines, Output, OutputMetrics, RunEvent } from '../../types.ts';

export function createDiscardOutput(metrics: OutputMetrics): Output {
  return {
    async write(events: RunEvent[]) {
      metrics.batches++;
      metrics.events += events.length;
      // Each event serialized once, as print writes it: its JSON and a newline.
      for (const event of events) metrics.bytes += Buffer.byteLength(JSON.stringify(event)) + 1;
    },
    async writeJsonLines(lines: JsonLines) {
      metrics.batches++;
      metrics.events += lines.count;
      for (const chunk of lines.chunks) metrics.bytes += chunk.length;
      lines.release?.();
    },
    async close() {},
  };
}
