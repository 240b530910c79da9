/**
 * Limits failed logins and key exchanges: at most 10 failures per principal and per
 * client address per minute, then 429 with Retry-After. Counters live in Firestore
 * (`rate-limits/...`, with `expires_at` for a TTL policy) so the limit holds across
 * function instances.
 */
import { createHash } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import type { Context } from 'hono';
import { ApiError } from '../../shared/errors.ts';

export const MAX_FAILURES_PER_MINUTE = 10;

export class FailureLimiter {
  constructor(private readonly db: Firestore) {}

  /** Throws 429 when any scope (e.g. `user:admin`, `ip:1.2.3.4`) used up its failures this minute. */
  async assertAllowed(scopes: string[]): Promise<void> {
    const refs = scopes.map((scope) => this.ref(scope));
    const snaps = await this.db.getAll(...refs);
    if (snaps.some((s) => ((s.get('count') as number | undefined) ?? 0) >= MAX_FAILURES_PER_MINUTE)) {
      throw ApiError.rateLimited(60 - new Date().getUTCSeconds());
    }
  }

  async recordFailure(scopes: string[]): Promise<void> {
    const { FieldValue } = await import('@google-cloud/firestore');
    const batch = this.db.batch();
    const expires = new Date(Date.now() + 2 * 60_000);
    for (const scope of scopes)
      batch.set(this.ref(scope), { count: FieldValue.increment(1), expires_at: expires }, { merge: true });
    await batch.commit();
  }

  private ref(scope: string) {
    const minute = Math.floor(Date.now() / 60_000);
    const id = createHash('sha256').update(scope).digest('hex').slice(0, 32);
    return this.db.collection('rate-limits').doc(`${id}-${minute}`);
  }
}

/** The caller's address: the first X-Forwarded-For hop behind Google's front end, else the socket. */
export function clientAddress(c: Context): string {
  const forwarded = c.req.header('x-forwarded-for');
  if (forwarded) return forwarded.split(',')[0]!.trim();
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}
