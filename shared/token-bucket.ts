/**
 * A token bucket: up to `burst` tokens, refilled at `perSecond`. Spending `cost` either
 * succeeds (the new level) or says how long until there would be enough.
 *
 * @example
 *   const r = spendTokens({ tokens: 10, at: 0 }, 5, 1000, { burst: 100, perSecond: 1 });
 *   // { ok: true, level: { tokens: 6, at: 1000 } }
 */

export interface BucketLevel {
  tokens: number;
  /** Milliseconds since the epoch of the last spend. */
  at: number;
}

export interface BucketRule {
  burst: number;
  perSecond: number;
}

export type Spend = { ok: true; level: BucketLevel } | { ok: false; retryAfterSeconds: number };

export function spendTokens(
  level: BucketLevel | undefined,
  cost: number,
  now: number,
  rule: BucketRule,
): Spend {
  const elapsed = level ? Math.max(0, now - level.at) : 0;
  const available = level
    ? Math.min(rule.burst, level.tokens + (elapsed / 1000) * rule.perSecond)
    : rule.burst;
  if (cost <= available) return { ok: true, level: { tokens: available - cost, at: now } };
  // A cost above the burst can never be paid: wait for a full bucket and send less.
  const missing = Math.min(cost, rule.burst) - available;
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(missing / rule.perSecond)) };
}
