/**
 * Regular expressions from job files, compiled with RE2 semantics (`re2js`, a pure
 * JavaScript port of RE2): matching takes time linear in the input, so no pattern a
 * user writes can hang a worker with catastrophic backtracking. The price is RE2's
 * syntax: no backreferences and no lookaround; such patterns are refused when the job
 * is validated, with a message that says so.
 *
 * Named groups may be written `(?P<Y>...)` (Python, RE2) or `(?<Y>...)` (JavaScript, PCRE).
 *
 * @example
 *   const re = compileSafeRegex('logs/(?P<Y>\\d{4})/(?P<m>\\d{2})/');
 *   re.exec('logs/2026/11/a.json'); // { Y: '2026', m: '11' }
 */
import { RE2JS } from 're2js';

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

const cache = new Map<string, SafeRegex>();
const CACHE_LIMIT = 1000;

export function compileSafeRegex(pattern: string): SafeRegex {
  const cached = cache.get(pattern);
  if (cached) return cached;
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
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, compiled);
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
