/**
 * Wraps an input that does not report its own runs (the gcs input does) so that each run
 * reports as a gcs run does: `job-run-started`; a failed run's `job-errors` (`reason`, and
 * `answer` when an upstream's answer was the failure);
 * and `job-run-ended` with its event count, duration (`ms`), `failed` and `aborted`.
 *
 * `job-run-ended` means the run is over and delivered: it comes only once the output has
 * acknowledged everything the run produced (flushed, and accepted by its destination), so
 * a job chained on it never starts before its events arrived. A run whose input or output
 * failed still ends, with `failed: true`, after its `job-errors`.
 *
 * @example
 *   const input = withRunReports(createHttpPollInput(config));
 */
import { reportFailure } from './answered-error.ts';
import { type Input, type JsonLines, markReported } from './types.ts';

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
      let thrown: { err: unknown } | undefined;
      try {
        await input.run(counted, async (batch) => {
          events += batch.length;
          await deliver(batch);
        });
        // What the run produced may still sit in the output's buffer (http-post, gcs, pubsub).
        if (!ctx.signal.aborted) await ctx.acknowledge?.();
      } catch (err) {
        thrown = { err };
      }
      // A run cut short by a stop (shutdown, redeploy) did not fail; the runner says nothing of it either.
      const failed = thrown !== undefined && !ctx.signal.aborted;
      // An output's failure was reported by the output, as its own.
      if (failed) reportFailure(ctx.report, thrown!.err);
      ctx.report({
        type: 'job-run-ended',
        payload: { events, ms: Date.now() - started, failed, aborted: ctx.signal.aborted },
      });
      if (thrown) throw failed ? markReported(thrown.err) : thrown.err;
    },
  };
}
