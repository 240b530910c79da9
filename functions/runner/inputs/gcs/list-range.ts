/**
 * Derives what to list from `object-names`, the run's time range (window and
 * `maximum-age`) and an `object-name-pattern`, so that a one-day window over years of
 * `logs/YYYY/MM/DD/...` objects lists one day, not the whole bucket.
 *
 * A range is derived only when it cannot miss an object: the pattern is anchored (`^`),
 * has no alternation, and starts with literal text and fixed-width digit groups in the
 * order Y, m, d, H, M, S. Names of that shape sort like their times, so the range is
 * `startOffset` = the name rendered at the range start and `endOffset` = the name
 * rendered one unit past the end. Anything else falls back to listing the prefixes.
 *
 * @example
 *   listQueries(['logs/'], compileSafeRegex('^logs/(?P<Y>\\d{4})/(?P<m>\\d{2})/(?P<d>\\d{2})/'), range);
 *   // [{ prefix: 'logs/', startOffset: 'logs/2026/03/01', endOffset: 'logs/2026/03/02' }]
 */
import type { ListQuery } from './list.ts';
import { minimalPrefixes } from './list.ts';

export interface TimeRange {
  start?: Date;
  end?: Date;
}

type Unit = 'Y' | 'm' | 'd' | 'H' | 'M' | 'S';
const ORDER: Unit[] = ['Y', 'm', 'd', 'H', 'M', 'S'];
const WIDTH: Record<Unit, number> = { Y: 4, m: 2, d: 2, H: 2, M: 2, S: 2 };
type Segment = { literal: string } | { unit: Unit };

export function listQueries(
  objectNames: string[],
  patternSource: string | undefined,
  range: TimeRange,
): ListQuery[] {
  const prefixes = objectNames.length ? minimalPrefixes(objectNames) : [''];
  const layout = patternSource ? nameLayout(patternSource) : undefined;
  if (!layout || (!range.start && !range.end)) return prefixes.map((p) => (p ? { prefix: p } : {}));
  const startOffset = range.start ? render(layout, range.start) : undefined;
  const endOffset = range.end
    ? render(layout, nextUnit(layout, new Date(range.end.getTime() - 1)))
    : undefined;
  const queries: ListQuery[] = [];
  for (const prefix of prefixes) {
    if (endOffset !== undefined && endOffset <= prefix) continue;
    if (startOffset !== undefined && startOffset > prefix && !startOffset.startsWith(prefix)) continue;
    queries.push({
      ...(prefix ? { prefix } : {}),
      ...(startOffset !== undefined && startOffset > prefix ? { startOffset } : {}),
      ...(endOffset !== undefined ? { endOffset } : {}),
    });
  }
  return queries;
}

/** The literal/group layout of an anchored date pattern, or undefined when ranges would be unsafe. */
export function nameLayout(source: string): Segment[] | undefined {
  if (!source.startsWith('^') || source.includes('|')) return undefined;
  const segments: Segment[] = [];
  let literal = '';
  let units = 0;
  let i = 1;
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === '\\') {
      const next = source[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) break;
      literal += next;
      i += 2;
      continue;
    }
    if (ch === '(') {
      const group = /^\(\?P?<([A-Za-z]\w*)>((?:\\d|\[0-9\])(?:\{(\d+)\})?((?:\\d|\[0-9\])*))\)/.exec(
        source.slice(i),
      );
      const unit = group?.[1] as Unit | undefined;
      if (!group || !unit || unit !== ORDER[units]) break;
      const width = (group[3] ? Number(group[3]) : 1) + countDigits(group[4]!);
      if (width !== WIDTH[unit]) break;
      if (literal) segments.push({ literal });
      literal = '';
      segments.push({ unit });
      units++;
      i += group[0].length;
      continue;
    }
    if ('.*+?[]{}()^$'.includes(ch)) break;
    literal += ch;
    i++;
  }
  if (units === 0) return undefined;
  if (literal && segments.length === 0) segments.push({ literal });
  return segments;
}

function countDigits(text: string): number {
  return (text.match(/\\d|\[0-9\]/g) ?? []).length;
}

function render(layout: Segment[], time: Date): string {
  const parts: Record<Unit, number> = {
    Y: time.getUTCFullYear(),
    m: time.getUTCMonth() + 1,
    d: time.getUTCDate(),
    H: time.getUTCHours(),
    M: time.getUTCMinutes(),
    S: time.getUTCSeconds(),
  };
  return layout
    .map((s) => ('literal' in s ? s.literal : String(parts[s.unit]).padStart(WIDTH[s.unit], '0')))
    .join('');
}

/** The start of the unit after the one holding `time`, at the layout's finest unit. */
function nextUnit(layout: Segment[], time: Date): Date {
  const finest = layout.filter((s): s is { unit: Unit } => 'unit' in s).at(-1)!.unit;
  const t = new Date(time);
  switch (finest) {
    case 'Y':
      return new Date(Date.UTC(t.getUTCFullYear() + 1, 0, 1));
    case 'm':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
    case 'd':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1));
    case 'H':
      return new Date(Math.floor(t.getTime() / 3_600_000) * 3_600_000 + 3_600_000);
    case 'M':
      return new Date(Math.floor(t.getTime() / 60_000) * 60_000 + 60_000);
    case 'S':
      return new Date(Math.floor(t.getTime() / 1_000) * 1_000 + 1_000);
  }
}
