/**
 * Regular expressions from job files, compiled with RE2 semantics (`re2js`, a pure
 * JavaScript port of RE2): matching takes time linear in the input, so no pattern a
 * user writes can hang a worker with catastrophic backtracking. The price is RE2's
 * syntax: no backreferences and no lookaround; such patterns are refused when the job
 * is validated, with a message that says so.
 *
 * Named groups may be written `(?P<Y>...)` (Python, RE2) or `(?<Y>...)` (JavaScript, PCRE).
 *
 * Compiling is bounded too (regex-size.ts says why): a pattern whose repetitions expand past
 * MAX_REGEX_SIZE steps is refused before re2js sees it, a job's patterns together may not
 * pass `withRegexBudget`'s budget, and the cache keeps at most CACHE_SIZE_LIMIT steps.
 *
 * @example
 *   const re = compileSafeRegex('logs/(?P<Y>\\d{4})/(?P<m>\\d{2})/');
 *   re.exec('logs/2026/11/a.json'); // { Y: '2026', m: '11' }
 */
import { RE2JS } from 're2js';
import { regexSize } from './regex-size.ts';

export interface SafeRegex {
  readonly source: string;
  readonly groupNames: string[];
  test(input: string): boolean;
  /** Named groups of the first match, or undefined when there is none. */
  exec(input: string): Record<string, string> | undefined;
}

export class RegexError extends Error {
  override name = 'RegexError';
}

/**
 * Steps one pattern may expand to: about 3 MB and 15 ms to compile. `\d{1,1000}` is 1,999;
 * `(?P<Y>\d{4})/(?P<m>\d{2})/` is 12.
 */
export const MAX_REGEX_SIZE = 2_000;

const cache = new Map<string, { regex: SafeRegex; size: number }>();
const CACHE_LIMIT = 1000;
/** Steps the cache keeps compiled (about 30 MB). */
const CACHE_SIZE_LIMIT = 20_000;
let cachedSize = 0;
/** Steps the current `withRegexBudget` scope may still compile; unbounded outside one. */
let budget = Number.POSITIVE_INFINITY;

/**
 * Runs `fn` (synchronous) with at most `steps` of new patterns compiled in it: what one job's
 * validation may cost, however many patterns it carries.
 */
export function withRegexBudget<T>(steps: number, fn: () => T): T {
  const outer = budget;
  budget = Math.min(outer, steps);
  try {
    return fn();
  } finally {
    budget = outer;
  }
}

export function compileSafeRegex(pattern: string): SafeRegex {
  const cached = cache.get(pattern);
  if (cached) return cached.regex;
  const size = regexSize(pattern);
  if (size > MAX_REGEX_SIZE)
    throw new RegexError(
      `the pattern is too large: its repetitions expand to about ${size.toLocaleString('en-US')} steps, more than ${MAX_REGEX_SIZE.toLocaleString('en-US')}; use smaller counts (such as {1,100}) or fewer nested repetitions`,
    );
  if (size > budget)
    throw new RegexError(
      "the job's patterns together are too large to compile: use fewer patterns or smaller repetition counts",
    );
  budget -= size;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern.replace(/\(\?<(?![=!])/g, '(?P<'));
  } catch (err) {
    throw new RegexError(explain(pattern, (err as Error).message));
  }
  const groupNames = Object.keys(re.namedGroups());
  const compiled: SafeRegex = {
    source: pattern,
    groupNames,
    test: (input) => re.matcher(input).find(),
    exec(input) {
      const m = re.matcher(input);
      if (!m.find()) return undefined;
      const groups: Record<string, string> = {};
      for (const name of groupNames) {
        const value = m.group(name);
        if (value !== null && value !== undefined) groups[name] = value;
      }
      return groups;
    },
  };
  if (cache.size >= CACHE_LIMIT || cachedSize + size > CACHE_SIZE_LIMIT) {
    cache.clear();
    cachedSize = 0;
  }
  cache.set(pattern, { regex: compiled, size });
  cachedSize += size;
  return compiled;
}

function explain(pattern: string, message: string): string {
  if (/\\[1-9]/.test(pattern))
    return `backreferences (\\1) are not supported: regexes run in linear time (RE2 syntax)`;
  if (/\(\?[=!]|\(\?<[=!]/.test(pattern)) {
    return `lookahead and lookbehind are not supported: regexes run in linear time (RE2 syntax)`;
  }
  return `invalid regular expression: ${message.replace(/^error parsing regexp: /, '')}`;
}
