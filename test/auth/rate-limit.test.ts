/**
 * The failure limit is a sliding 60 s window on the real Firestore emulator, with a clock
 * the test moves: no burst across a minute boundary, and Retry-After says when the oldest
 * failure leaves the window. An attempt counts from when it begins, so attempts checked at
 * the same time count against each other.
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

/** The Retry-After seconds of a refusal, or undefined when allowed (the attempt then fails). */
async function retryAfter(l: FailureLimiter, scopes: string[]): Promise<number | undefined> {
  try {
    await l.begin(scopes);
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
    for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) await l.begin([user, `ip:other-${i}`]);
    expect(await retryAfter(l, [`user:another-${Math.random()}`, address])).toBeUndefined();
    expect(await retryAfter(l, [user, address])).toBe(60);
  });

  it('lets at most 10 of 50 attempts begun at the same time be checked', async () => {
    const { clock, limiter: l } = await limiter();
    const scope = [`user:burst-${clock.now}-${Math.random()}`];
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => retryAfter(l, scope)));
    expect(outcomes.filter((o) => o === undefined).length).toBeLessThanOrEqual(MAX_FAILURES_PER_MINUTE);
    expect(outcomes.filter((o) => o !== undefined).every((o) => o === 60)).toBe(true);
  });

  it('counts 10 attempts begun at the same time, and refuses the next', async () => {
    const { clock, limiter: l } = await limiter();
    const scope = [`user:ten-${clock.now}-${Math.random()}`];
    const outcomes = await Promise.all(
      Array.from({ length: MAX_FAILURES_PER_MINUTE }, () => retryAfter(l, scope)),
    );
    expect(outcomes.every((o) => o === undefined)).toBe(true);
    expect(await retryAfter(l, scope)).toBe(60);
  });

  it('does not count an attempt that succeeded', async () => {
    const { clock, limiter: l } = await limiter();
    const scope = [`user:good-${clock.now}-${Math.random()}`];
    for (let i = 0; i < 3 * MAX_FAILURES_PER_MINUTE; i++) await (await l.begin(scope)).succeeded();
    expect(await retryAfter(l, scope)).toBeUndefined();
  });
});
