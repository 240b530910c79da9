/** A 429's Retry-After, read and said as "try again in 30 s" instead of "try again later". */
import { describe, expect, it } from 'vitest';
import { retryAfterSeconds } from '../../shared/api/retry-after.ts';
import { waitText, withRetryTime } from '../../web/src/lib/retry-after.ts';

describe('retryAfterSeconds', () => {
  it('reads seconds, or an HTTP date', () => {
    expect(retryAfterSeconds('30')).toBe(30);
    expect(retryAfterSeconds(' 7 ')).toBe(7);
    expect(retryAfterSeconds('0')).toBe(1);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:45 GMT', now)).toBe(45);
    expect(retryAfterSeconds('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(1);
  });

  it('gives nothing for a missing or unreadable header', () => {
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(retryAfterSeconds('')).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds('-5')).toBeUndefined();
  });
});

describe('withRetryTime', () => {
  it('says when instead of "later"', () => {
    expect(withRetryTime('too many attempts; try again later', 30)).toBe(
      'too many attempts; try again in 30 s',
    );
  });

  it('adds when to a message that does not say "later"', () => {
    expect(withRetryTime('rate limited.', 5)).toBe('rate limited; try again in 5 s');
  });

  it('counts long waits in minutes', () => {
    expect(waitText(59)).toBe('59 s');
    expect(waitText(119)).toBe('119 s');
    expect(waitText(120)).toBe('2 min');
    expect(waitText(601)).toBe('11 min');
  });
});
