/**
 * Wraps an input that does not report its own runs (the gcs input does) so that each
 * run records `job-run-started` and `job-run-ended` with its event count and duration.
 */
import type { Input } from './types.ts';

export function withRunReports(input: Input): Input {
  return {
    async run(ctx, deliver) {
      const started = Date.now();
      let events = 0;
      ctx.report({ type: 'job-run-started', payload: ctx.window ? { window: ctx.window } : {} });
      await input.run(ctx, async (batch) => {
        events += batch.length;
        await deliver(batch);
      });
      ctx.report({ type: 'job-run-ended', payload: { events, ms: Date.now() - started } });
    },
  };
}
