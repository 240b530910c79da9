/**
 * An upstream answered a request with a failure. The error's message quotes the answer (the
 * run's error, which operators see); a `job-errors` report gives only what happened in
 * `reason` and the answer in a field of its own, `answer`, which viewers never see
 * (shared/events/visibility.ts): an answer may echo the request, headers and all.
 *
 * @example
 *   throw new AnsweredError('https://api/x answered 500', '<html>…');
 *   // reported as { reason: 'https://api/x answered 500', answer: '<html>…' }
 */
import { type RunReport, wasReported } from './types.ts';

export class AnsweredError extends Error {
  constructor(
    readonly summary: string,
    readonly answer: string,
  ) {
    super(`${summary}: ${answer}`);
  }
}

/**
 * Reports a run that failed with `err` as `job-errors`, unless whoever threw it (an input or
 * an output, with more detail) reported it already.
 */
export function reportFailure(report: (report: RunReport) => void, err: unknown): void {
  if (!wasReported(err)) report({ type: 'job-errors', payload: failurePayload(err) });
}

/** The payload of the `job-errors` report of a run that failed with `err`. */
function failurePayload(err: unknown): { reason: string; answer?: string } {
  if (err instanceof AnsweredError) return { reason: err.summary, answer: err.answer };
  return { reason: err instanceof Error ? err.message : String(err) };
}
