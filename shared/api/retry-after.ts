/**
 * How long a `Retry-After` header (seconds, or an HTTP date) asks a client to wait before it
 * tries again: the CLI and the web UI say "try again in 30 s" with it.
 *
 * @example
 *   retryAfterSeconds('30'); // 30
 *   retryAfterSeconds('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('2026-10-21T07:27:30Z')); // 30
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
