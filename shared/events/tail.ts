/**
 * Following the event log without missing late arrivals. Event ids sort by the time an
 * event was made, but an event becomes readable when its write commits: one written in a
 * slow transaction, or by another instance in the same millisecond, can land behind an
 * event already shown, and a cursor that only moves forward would skip it. So each poll
 * reads again from SETTLE_MS before the newest event seen, and drops what it showed
 * already. Used by `sluice events tail` and the web UI's live feeds.
 *
 * @example
 *   const tail = new EventTail(new Date());
 *   const page = await get('/api/events', { since: tail.since() });
 *   for (const event of tail.fresh(page.events)) show(event);
 */

/** How long after its id's time an event may still become readable (a write's commit). */
export const SETTLE_MS = 10_000;

export class EventTail {
  /** Ids shown, with their time, for as long as they may be read again. */
  readonly #shown = new Map<string, number>();
  readonly #start: number;
  #newest: number;

  /** Events from `start` on (the first poll reads from there). */
  constructor(
    start: Date,
    readonly settleMs = SETTLE_MS,
  ) {
    this.#start = start.getTime();
    this.#newest = this.#start;
  }

  /** Where a poll starts reading (RFC 3339, inclusive). */
  since(): string {
    return new Date(Math.max(this.#start, this.#newest - this.settleMs)).toISOString();
  }

  /** The events of a page that were not shown before, in their order. */
  fresh<E extends { id: string; time: string }>(events: readonly E[]): E[] {
    const out: E[] = [];
    for (const event of events) {
      if (this.#shown.has(event.id)) continue;
      const time = Date.parse(event.time);
      this.#shown.set(event.id, time);
      if (time > this.#newest) this.#newest = time;
      out.push(event);
    }
    // Forget what the next poll can no longer read (its window starts later).
    const horizon = this.#newest - this.settleMs;
    for (const [id, time] of this.#shown) if (time < horizon) this.#shown.delete(id);
    return out;
  }
}
