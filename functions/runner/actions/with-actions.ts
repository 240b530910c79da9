/**
 * Puts a job's `actions` between its input and its output. A job without actions gets
 * its input back unchanged, so its events keep every fast path (a gcs input hands NDJSON
 * lines to `print` as bytes, never parsed). With actions, each event goes through the
 * chain compiled once here: an input that can apply it to JSON lines itself (`gcs`) gets it
 * as `ctx.actions` and keeps delivering lines; any other delivers event objects, which
 * pass through it here. Each run reports the counts (`job-metrics`, `actions`) and a
 * sample of evaluation errors (`job-errors`, with the action's index and field, never the
 * event's values).
 *
 * @example
 *   const input = withActions(inputFor(definition), definition);
 */
import type { JobDefinition } from '../../../shared/job/schema.ts';
import type { Input, RunEvent } from '../types.ts';
import { type ActionFailure, compileActionChain } from './chain.ts';

/** Evaluation errors reported one by one per run; the rest are only counted. */
export const ERRORS_REPORTED_PER_RUN = 10;

// Inputs that already apply their job's actions: wrapping twice would apply them twice.
const withActionsApplied = new WeakSet<Input>();

export function withActions(input: Input, definition: Pick<JobDefinition, 'actions'>): Input {
  const actions = definition.actions;
  if (!actions?.length || withActionsApplied.has(input)) return input;
  let onError: (failure: ActionFailure) => void = () => {};
  const chain = compileActionChain(actions, { onError: (failure) => onError(failure) });
  const wrapped: Input = {
    async run(ctx, deliver) {
      chain.bind({ job: ctx.job, worker: ctx.worker });
      chain.takeStats();
      let reported = 0;
      onError = (failure) => {
        if (++reported > ERRORS_REPORTED_PER_RUN) return;
        const { reason: message, ...where } = failure;
        ctx.report({ type: 'job-errors', payload: { reason: 'action-evaluation-error', ...where, message } });
      };
      // Other inputs get no deliverJsonLines: they deliver event objects, for the chain below.
      const { deliverJsonLines, ...objectsOnly } = ctx;
      const inner =
        input.appliesActionsToJsonLines && deliverJsonLines ? { ...ctx, actions: chain } : objectsOnly;
      try {
        await input.run(inner, async (batch, unit) => {
          const out: RunEvent[] = [];
          for (let i = 0; i < batch.length; i++) {
            const event = chain.apply(batch[i]!);
            if (event !== undefined) out.push(event);
          }
          if (out.length) await deliver(out, unit);
        });
      } finally {
        const stats = chain.takeStats();
        ctx.report({
          type: 'job-metrics',
          payload: {
            actions: {
              events_in: stats.events_in,
              events_out: stats.events_out,
              dropped_by_filter: stats.dropped.reduce((a, b) => a + b, 0),
              evaluation_errors: stats.errors.reduce((a, b) => a + b, 0),
              by_action: actions.map((action, index) => ({
                index,
                kind: Object.keys(action).find((k) => (action as Record<string, unknown>)[k] !== undefined),
                dropped: stats.dropped[index],
                errors: stats.errors[index],
              })),
            },
          },
        });
        if (reported > ERRORS_REPORTED_PER_RUN)
          ctx.report({
            type: 'job-errors',
            payload: {
              reason: 'more-action-evaluation-errors',
              unreported: reported - ERRORS_REPORTED_PER_RUN,
            },
          });
      }
    },
  };
  withActionsApplied.add(wrapped);
  return wrapped;
}
