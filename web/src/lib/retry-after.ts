/**
 * A refused request's message that says when to try again instead of "later", from the
 * seconds shared/api/retry-after.ts reads in its `Retry-After` (as the CLI reads them).
 * Pure, so it is tested without a browser.
 *
 * @example
 *   withRetryTime('too many attempts; try again later', 30)            // 'too many attempts; try again in 30 s'
 */

/** `30 s`, `2 min`. */
export function waitText(seconds: number): string {
  return seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

/** The API's message with "later" replaced by the wait, or the wait added to it. */
export function withRetryTime(message: string, seconds: number): string {
  const when = `try again in ${waitText(seconds)}`;
  return /try again later/i.test(message)
    ? message.replace(/try again later/i, when)
    : `${message.replace(/[.;\s]+$/, '')}; ${when}`;
}
