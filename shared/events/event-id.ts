/**
 * Event ids start with the time the event was made (`20261123120000123`, then a random
 * part), so the log sorts by time: the server makes ids with this, and readers that want
 * "from a time on" or "before a time" compare ids with it.
 *
 * @example
 *   eventIdTime(new Date('2026-11-23T12:00:00.123Z')); // '20261123120000123'
 */

/** The time part that starts an event id: every event made after `date` has a greater id. */
export function eventIdTime(date: Date): string {
  return date.toISOString().replace(/[-:.TZ]/g, '');
}
