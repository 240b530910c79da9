/**
 * The failure limit is a sliding 60 s window on the real Firestore emulator, with a clock
 * the test moves: no burst across a minute boundary, and Retry-After says when the oldest
 * failure leaves the window.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FailureLimiter, MAX_FAILURES_PER_MINUTE } from '../../functions/auth/rate-limit.ts';
import { ApiError } from '../../shared/errors.ts';
import { testDeps } from '../helpers/app.ts';

const { deps } = testDeps();
afterAll(() => deps.clients.close());

/** A limiter whose clock reads `clock.now`. */
async function limiter() {
  const clock = { now: Date.UTC(2026, 10, 23, 12, 0, 59) };
  return { clock, limiter: new FailureLimiter(await deps.clients.firestore(), () => clock.now) };
}

/** The Retry-After seconds of a refusal, or undefined when allowed. */
async function retryAfter(l: FailureLimiter, scopes: string[]): Promise<number | undefined> {
  try {
    await l.assertAllowed(scopes);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    return (err as ApiError).retryAfter;
  }
}

describe('FailureLimiter', () => {
  it('refuses the 11th failure across a minute boundary, until the oldest is 60 s old', async () => {
    const { clock, limiter: l } = await limiter();
    const scope = [`user:boundary-${clock.now}-${Math.random()}`];
    for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) {
      expect(await retryAfter(l, scope)).toBeUndefined();
      await l.recordFailure(scope);
      clock.now += 100; // failures at 12:00:59.0, 59.1, … 59.9
    }
    clock.now += 1_000; // 12:01:01.0, in the next clock minute
    expect(await retryAfter(l, scope)).toBe(58);
    clock.now += 57_900; // 12:01:58.9: the oldest is 59.9 s old
    expect(await retryAfter(l, scope)).toBe(1);
    clock.now += 200; // 12:01:59.1: it is 60.1 s old, nine are left
    expect(await retryAfter(l, scope)).toBeUndefined();
  });

  it('counts every scope on its own and refuses when any one is used up', async () => {
    const { clock, limiter: l } = await limiter();
    const user = `user:one-${Math.random()}`;
    const address = `ip:10.0.0.${Math.floor(Math.random() * 250)}-${clock.now}`;
    for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) await l.recordFailure([user, `ip:other-${i}`]);
    expect(await retryAfter(l, [`user:another-${Math.random()}`, address])).toBeUndefined();
    expect(await retryAfter(l, [user, address])).toBe(60);
  });

  it('counts failures recorded at the same time by concurrent requests', async () => {
    const { clock, limiter: l } = await limiter();
    const scope = [`user:burst-${clock.now}-${Math.random()}`];
    await Promise.all(Array.from({ length: MAX_FAILURES_PER_MINUTE }, () => l.recordFailure(scope)));
    expect(await retryAfter(l, scope)).toBe(60);
  });
});
