/**
 * The per-object timestamp of `timestamp-mode`: the store's last-modified time, or the
 * time spelled by an `object-name-pattern`'s named groups (Y, m, d and, when present,
 * H, M, S; missing ones count as the start of the period), read as UTC.
 *
 * @example
 *   objectTimestamp(meta, { kind: 'object-name-pattern', pattern }); // Date for logs/2026/03/01/a.json
 */
import type { TimestampStrategy } from './config.ts';
import type { ObjectMeta } from './list.ts';

/** undefined: the strategy is `none`; null: the object has no timestamp under this strategy. */
export function objectTimestamp(meta: ObjectMeta, strategy: TimestampStrategy): Date | null | undefined {
  if (strategy.kind === 'none') return undefined;
  if (strategy.kind === 'last-modified') {
    const time = meta.updated ?? meta.timeCreated;
    return time ? new Date(time) : null;
  }
  const groups = strategy.pattern.exec(meta.name);
  if (!groups?.Y || !groups.m || !groups.d) return null;
  const n = (v: string | undefined) => (v ? Number(v) : 0);
  const time = Date.UTC(n(groups.Y), n(groups.m) - 1, n(groups.d), n(groups.H), n(groups.M), n(groups.S));
  return Number.isNaN(time) ? null : new Date(time);
}
