/**
 * When a refused request may be tried again: the `Retry-After` header of a `429`
 * (seconds, or an HTTP date), and a message that says when instead of "later".
 * Pure, so it is tested without a browser.
 *
 * @example
 *   retryAfterSeconds('30')                                            // 30
 *   withRetryTime('too many attempts; try again later', 30)            // 'too many attempts; try again in 30 s'
 */

/** Seconds to wait (at least 1), or undefined when the header is missing or unreadable. */
export function retryAfterSeconds(header: string | null | undefined, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Math.max(1, Number(value));
  // Otherwise an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`), never a bare number.
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(1, Math.ceil((at - now) / 1000));
}

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
