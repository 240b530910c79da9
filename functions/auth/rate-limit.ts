/**
 * Limits failed logins and key exchanges: at most 10 failures per principal and per
 * client address in any 60 seconds, then 429 with Retry-After. A sliding window, not one
 * per clock minute: with fixed minutes, 10 failures at the end of one and 10 at the start
 * of the next made 20 in a few seconds. Each failure is a document of its own
 * (`rate-limits/{sha256(scope)}/rate-limit-failures/{auto}`, with `at` and `expires_at`
 * for a TTL policy), so concurrent failures never contend for one document, and the limit
 * holds across function instances.
 */
import { createHash } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import type { Context } from 'hono';
import { ApiError } from '../../shared/errors.ts';
import { rootCollection } from '../adapters/firestore-paths.ts';

export const MAX_FAILURES_PER_MINUTE = 10;
const WINDOW_MS = 60_000;

export class FailureLimiter {
  constructor(
    private readonly db: Firestore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Throws 429 when any scope (e.g. `user:admin`, `ip:1.2.3.4`) had 10 failures in the
   * last 60 s, with Retry-After saying when the oldest of them leaves the window.
   */
  async assertAllowed(scopes: string[]): Promise<void> {
    const now = this.now();
    const latest = await Promise.all(
      scopes.map((scope) =>
        this.failures(scope)
          .where('at', '>', now - WINDOW_MS)
          .orderBy('at', 'desc')
          .limit(MAX_FAILURES_PER_MINUTE)
          .select('at')
          .get(),
      ),
    );
    let waitMs = 0;
    for (const snap of latest) {
      if (snap.size < MAX_FAILURES_PER_MINUTE) continue;
      const oldest = snap.docs[snap.size - 1]!.get('at') as number;
      waitMs = Math.max(waitMs, oldest + WINDOW_MS - now);
    }
    if (waitMs > 0) throw ApiError.rateLimited(Math.max(1, Math.ceil(waitMs / 1000)));
  }

  /** Records one failure for each scope. */
  async recordFailure(scopes: string[]): Promise<void> {
    const now = this.now();
    const batch = this.db.batch();
    for (const scope of scopes)
      batch.create(this.failures(scope).doc(), { at: now, expires_at: new Date(now + WINDOW_MS) });
    await batch.commit();
  }

  private failures(scope: string) {
    const id = createHash('sha256').update(scope).digest('hex').slice(0, 32);
    return rootCollection(this.db, 'rate-limits').doc(id).collection('rate-limit-failures');
  }
}

/**
 * The caller's address, for the per-address limit. X-Forwarded-For is written by whoever
 * sends the request, so only entries that trusted proxies appended count: with
 * `trustedProxyHops` = 1 (Google's load balancer appends `<client>, <balancer>`), the
 * second entry from the end. With 0 (nothing in front, the local stack) the header is
 * ignored: honouring it let every failed login come from a fresh "address".
 */
export function clientAddress(c: Context, trustedProxyHops: number): string {
  if (trustedProxyHops > 0) {
    const hops = (c.req.header('x-forwarded-for') ?? '').split(',').map((hop) => hop.trim());
    const appended = hops.length > trustedProxyHops ? hops[hops.length - 1 - trustedProxyHops] : undefined;
    if (appended) return appended;
  }
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}
