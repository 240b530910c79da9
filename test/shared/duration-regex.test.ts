import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../shared/duration.ts';
import { compileSafeRegex } from '../../shared/regex.ts';
import { parseStartTime } from '../../shared/time-format.ts';

describe('durations', () => {
  it('parses the contract grammar', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('30d')).toBe(2_592_000_000);
    expect(parseDuration('1.5s')).toBe(1500);
  });

  it('takes bare numbers as seconds only where allowed', () => {
    expect(parseDuration(30, { bareSeconds: true })).toBe(30_000);
    expect(parseDuration('30', { bareSeconds: true })).toBe(30_000);
    expect(() => parseDuration('30')).toThrow('needs a unit');
  });

  it('refuses anything else', () => {
    for (const bad of ['', '5', '-5m', '5 m', '1y', 'abc', '5m30', 'm5'])
      expect(() => parseDuration(bad)).toThrow();
  });

  it('formats durations back to the shortest spelling', () => {
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(1500)).toBe('1s500ms');
  });
});

describe('safe regexes', () => {
  it('takes both named-group spellings', () => {
    expect(compileSafeRegex('(?P<Y>\\d{4})-(?<m>\\d{2})').exec('x 2026-11 y')).toEqual({
      Y: '2026',
      m: '11',
    });
  });

  it('matches a catastrophic-backtracking pattern in linear time', () => {
    const re = compileSafeRegex('^(a+)+$');
    const started = performance.now();
    expect(re.test(`${'a'.repeat(50_000)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses backreferences and lookaround with a reason', () => {
    expect(() => compileSafeRegex('(a)\\1')).toThrow('backreferences');
    expect(() => compileSafeRegex('a(?!b)')).toThrow('lookahead');
  });
});

describe('start-time format', () => {
  it('parses %Y-%m-%d %H:%M:%S%.3f %z', () => {
    expect(parseStartTime('2026-01-01 06:30:00.250 +0100').toISOString()).toBe('2026-01-01T05:30:00.250Z');
    expect(parseStartTime('2026-01-01 00:00:00 -05:30').toISOString()).toBe('2026-01-01T05:30:00.000Z');
  });
});
