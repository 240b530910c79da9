/**
 * Compiling a pattern is bounded as matching is: re2js expands counted repetitions when it
 * compiles, so a short pattern could cost a gigabyte and seconds. regexSize counts what a
 * pattern expands to (RE2's own count), and compileSafeRegex refuses what is too large
 * before re2js sees it.
 */
import { describe, expect, it } from 'vitest';
import { compileSafeRegex, MAX_REGEX_SIZE, RegexError, withRegexBudget } from '../../shared/regex.ts';
import { regexSize } from '../../shared/regex-size.ts';

describe('regexSize', () => {
  it('counts as RE2 does: characters, repetitions expanded, groups and alternatives', () => {
    expect(regexSize('logs/')).toBe(5);
    expect(regexSize('logs/\\d{4}/')).toBe(10);
    expect(regexSize('a*')).toBe(3);
    expect(regexSize('a+?')).toBe(2);
    expect(regexSize('a{2,5}')).toBe(8);
    expect(regexSize('a{3,}')).toBe(4);
    expect(regexSize('(?:ab)|c')).toBe(4);
    expect(regexSize('(ab)|c')).toBe(6);
    expect(regexSize('[a-z{}]{0,255}')).toBe(510);
    expect(regexSize('(a{0,999}){0,999}')).toBe(999 * (2 + 999 + 999) + 999);
    // A `{` that starts no count is a character; `(?i)` sets a flag and is no group.
    expect(regexSize('a{,5}')).toBe(5);
    expect(regexSize('(?i)ab')).toBe(2);
    // Escaped and quoted characters are characters, never repetitions.
    expect(regexSize('\\{2}')).toBe(3);
    expect(regexSize('\\Qa{9}\\E')).toBe(4);
  });
});

describe('compileSafeRegex bounds what compiling costs', () => {
  it('refuses a short pattern that expands past the limit, saying how to write it smaller', () => {
    const compile = () => compileSafeRegex('(a{0,999}){0,999}');
    expect(compile).toThrow(RegexError);
    expect(compile).toThrow(/too large: its repetitions expand to about 1,998,999 steps, more than 2,000/);
  });

  it('takes the largest counts RE2 allows on one character', () => {
    expect(regexSize('\\d{1,1000}')).toBeLessThanOrEqual(MAX_REGEX_SIZE);
    expect(compileSafeRegex('\\d{1,1000}').exec('7'.repeat(1000))).toEqual({});
  });

  it('keeps the patterns compiled in one budget to that budget, and again what is cached', () => {
    const patterns = Array.from({ length: 5 }, (_, i) => `p${i}[0-9]{0,500}`);
    const cost = regexSize(patterns[0]!);
    const compileAll = () => withRegexBudget(cost * 4, () => patterns.map(compileSafeRegex));
    expect(compileAll).toThrow(/patterns together are too large/);
    // The four compiled before the budget ran out are cached: compiling them again is free.
    expect(() => withRegexBudget(cost, () => patterns.slice(0, 4).map(compileSafeRegex))).not.toThrow();
    // Outside a budget only the one-pattern limit applies.
    expect(patterns.map(compileSafeRegex)).toHaveLength(5);
  });
});
