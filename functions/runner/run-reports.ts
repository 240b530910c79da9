/**
 * Wraps an input that does not report its own runs (the gcs input does) so that each
 * run records `job-run-started` and `job-run-ended` with its event count and duration.
 */
import type { Input, JsonLines } from './types.ts';

export function withRunReports(input: Input): Input {
  return {
    async run(ctx, deliver) {
      const started = Date.now();
      let events = 0;
      ctx.report({ type: 'job-run-started', payload: ctx.window ? { window: ctx.window } : {} });
      const { deliverJsonLines } = ctx;
      const counted = deliverJsonLines
        ? {
            ...ctx,
            deliverJsonLines: async (lines: JsonLines) => {
              events += lines.count;
              await deliverJsonLines(lines);
            },
          }
        : ctx;
      await input.run(counted, async (batch) => {
        events += batch.length;
        await deliver(batch);
      });
      ctx.report({ type: 'job-run-ended', payload: { events, ms: Date.now() - started } });
    },
  };
}
