/**
 * Timestamps of `parse-timestamp`: a strftime-style format (`%d/%b/%Y:%H:%M:%S %z`) or
 * `rfc3339`, compiled once into a regular expression and read into a UTC instant.
 * Without `%z` or `%Z` the text is taken as UTC.
 *
 * @example
 *   const parse = compileTimestampFormat('%d/%b/%Y:%H:%M:%S %z');
 *   parse('10/Oct/2000:13:55:36 -0700')?.toISOString(); // '2000-10-10T20:55:36.000Z'
 *
 * The pattern runs on RE2 (linear time): the format is the user's and the text is event data.
 */
import { compileSafeRegex } from '../../regex.ts';

type Part = 'Y' | 'm' | 'd' | 'H' | 'M' | 'S' | 'f' | 'z' | 'b' | 'y' | 'j' | 's' | 'p' | 'I';

const DIRECTIVES: Record<string, { re: string; part?: Part }> = {
  Y: { re: '([+-]?\\d{4})', part: 'Y' },
  y: { re: '(\\d{2})', part: 'y' },
  m: { re: '(\\d{1,2})', part: 'm' },
  d: { re: '(\\d{1,2})', part: 'd' },
  e: { re: ' ?(\\d{1,2})', part: 'd' },
  j: { re: '(\\d{1,3})', part: 'j' },
  H: { re: '(\\d{1,2})', part: 'H' },
  I: { re: '(\\d{1,2})', part: 'I' },
  M: { re: '(\\d{2})', part: 'M' },
  S: { re: '(\\d{2})', part: 'S' },
  f: { re: '(\\d{1,9})', part: 'f' },
  p: { re: '(AM|PM|am|pm)', part: 'p' },
  z: { re: '(Z|[+-]\\d{2}:?\\d{2})', part: 'z' },
  Z: { re: '(UTC|GMT|Z)' },
  b: { re: '([A-Za-z]{3})', part: 'b' },
  h: { re: '([A-Za-z]{3})', part: 'b' },
  B: { re: '([A-Za-z]{3,9})', part: 'b' },
  s: { re: '(-?\\d{1,12})', part: 's' },
  a: { re: '[A-Za-z]{3}' },
  A: { re: '[A-Za-z]{6,9}' },
  T: { re: '' },
  F: { re: '' },
  '%': { re: '%' },
};
const EXPANSIONS: Record<string, string> = { T: '%H:%M:%S', F: '%Y-%m-%d' };
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export const RFC3339 = 'rfc3339';

export type TimestampParser = (text: string) => Date | undefined;

/** Compiles `format`; throws with a message for people when it is not one. */
export function compileTimestampFormat(format: string): TimestampParser {
  if (format.toLowerCase() === RFC3339) return parseRfc3339;
  const expanded = format.replace(/%([TF])/g, (_, letter: string) => EXPANSIONS[letter]!);
  const parts: Part[] = [];
  let re = '^';
  for (let i = 0; i < expanded.length; i++) {
    const char = expanded[i]!;
    if (char !== '%') {
      re += char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      continue;
    }
    const letter = expanded[++i];
    const directive = letter === undefined ? undefined : DIRECTIVES[letter];
    if (!directive || letter === 'T' || letter === 'F')
      throw new Error(
        `%${letter ?? ''} is not a time directive (use %Y %y %m %d %e %j %H %I %p %M %S %f %z %Z %b %B %a %A %s %T %F %%, or rfc3339)`,
      );
    // Capturing directives become named groups (g0, g1, ...), the form the RE2 wrapper returns.
    re += directive.part ? directive.re.replace('(', `(?P<g${parts.length}>`) : directive.re;
    if (directive.part) parts.push(directive.part);
  }
  if (!parts.some((p) => p === 'Y' || p === 'y' || p === 's'))
    throw new Error('the format needs a year (%Y or %y) or epoch seconds (%s)');
  const pattern = compileSafeRegex(`${re}$`);
  return (text) => {
    const groups = pattern.exec(text.trim());
    if (!groups) return undefined;
    return assemble(parts, groups);
  };
}

function assemble(parts: Part[], groups: Record<string, string>): Date | undefined {
  let year = 1970;
  let month = 1;
  let day = 1;
  let dayOfYear: number | undefined;
  let hour = 0;
  let hour12: number | undefined;
  let pm: boolean | undefined;
  let minute = 0;
  let second = 0;
  let ms = 0;
  let offsetMinutes = 0;
  let epoch: number | undefined;
  for (let i = 0; i < parts.length; i++) {
    const value = groups[`g${i}`] ?? '';
    switch (parts[i]) {
      case 'Y':
        year = Number(value);
        break;
      case 'y':
        year = 2000 + Number(value) - (Number(value) >= 69 ? 100 : 0);
        break;
      case 'm':
        month = Number(value);
        break;
      case 'd':
        day = Number(value);
        break;
      case 'j':
        dayOfYear = Number(value);
        break;
      case 'H':
        hour = Number(value);
        break;
      case 'I':
        hour12 = Number(value);
        break;
      case 'p':
        pm = value.toLowerCase() === 'pm';
        break;
      case 'M':
        minute = Number(value);
        break;
      case 'S':
        second = Number(value);
        break;
      case 'f':
        ms = Math.floor(Number(`0.${value}`) * 1000);
        break;
      case 's':
        epoch = Number(value);
        break;
      case 'b': {
        const index = MONTHS.indexOf(value.slice(0, 3).toLowerCase());
        if (index < 0) return undefined;
        month = index + 1;
        break;
      }
      case 'z': {
        if (value === 'Z') break;
        const digits = value.replace(':', '');
        const sign = digits[0] === '-' ? -1 : 1;
        offsetMinutes = sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
        break;
      }
    }
  }
  if (epoch !== undefined) return new Date(epoch * 1000 + ms);
  if (hour12 !== undefined) hour = (hour12 % 12) + (pm ? 12 : 0);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return undefined;
  const utc =
    dayOfYear !== undefined
      ? Date.UTC(year, 0, dayOfYear, hour, minute, second, ms)
      : Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), ms);
  if (dayOfYear === undefined && new Date(utc).getUTCDate() !== day) return undefined;
  return new Date(utc - offsetMinutes * 60_000);
}

const RFC3339_RE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function parseRfc3339(text: string): Date | undefined {
  const trimmed = text.trim();
  if (!RFC3339_RE.test(trimmed)) return undefined;
  // Date.parse keeps milliseconds only; finer digits are dropped, as RFC 3339 UTC output has three.
  const normalized = trimmed.replace(/(\.\d{3})\d+/, '$1');
  const ms = Date.parse(normalized.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
