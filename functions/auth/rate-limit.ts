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

/** An attempt begun in `FailureLimiter.begin`: a failure unless it succeeded. */
export interface LimitedAttempt {
  /** The credential was good: the attempt is not a failure. */
  succeeded(): Promise<void>;
}

export class FailureLimiter {
  constructor(
    private readonly db: Firestore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Begins an attempt (a password or key about to be checked) in each scope (e.g.
   * `user:admin`, `ip:1.2.3.4`): recorded as a failure first, then counted, so that
   * attempts checked at the same time count against each other. Checking first and
   * recording after let 50 concurrent wrong passwords all be checked, where 10 may. Throws
   * 429 when a scope has 10 other attempts in the last 60 s, with Retry-After saying when
   * the oldest of them leaves the window; a refused attempt is not counted. The attempt
   * stays a failure unless `succeeded()` is called once the credential proved good.
   */
  async begin(scopes: string[]): Promise<LimitedAttempt> {
    const now = this.now();
    const refs = scopes.map((scope) => this.failures(scope).doc());
    const batch = this.db.batch();
    for (const ref of refs) batch.create(ref, { at: now, expires_at: new Date(now + WINDOW_MS) });
    await batch.commit();
    const ours = new Set(refs.map((ref) => ref.path));
    const latest = await Promise.all(
      scopes.map((scope) =>
        this.failures(scope)
          .where('at', '>', now - WINDOW_MS)
          .orderBy('at', 'desc')
          .limit(MAX_FAILURES_PER_MINUTE + 1)
          .select('at')
          .get(),
      ),
    );
    let waitMs = 0;
    for (const snap of latest) {
      const others = snap.docs.filter((doc) => !ours.has(doc.ref.path)).slice(0, MAX_FAILURES_PER_MINUTE);
      if (others.length < MAX_FAILURES_PER_MINUTE) continue;
      const oldest = others[others.length - 1]!.get('at') as number;
      waitMs = Math.max(waitMs, oldest + WINDOW_MS - now);
    }
    const forget = async () => {
      const removal = this.db.batch();
      for (const ref of refs) removal.delete(ref);
      await removal.commit();
    };
    if (waitMs > 0) {
      await forget();
      throw ApiError.rateLimited(Math.max(1, Math.ceil(waitMs / 1000)));
    }
    return { succeeded: forget };
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
