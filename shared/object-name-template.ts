/**
 * Names of the objects the `gcs` output writes: a template with time tokens (`%Y`, `%m`,
 * `%d`, `%H`, `%M`, `%S`, `%j`, `%%`; UTC) and placeholders in single braces: `{part}`
 * (required: it keeps names apart), `{source}` and `{generation}` (the object the events
 * were read from, for `gcs` → `gcs`: a re-run then writes the same names, overwriting
 * instead of duplicating). `{{...}}` context references are rendered before this.
 *
 * Two uses of `{source}` defeat it and are refused (sourceNameProblem, sourceInputProblem):
 * time tokens filled from the clock, and an input that reads no objects.
 *
 * @example
 *   renderObjectName('logs/%Y/%m/%d/app-{part}.ndjson.gz', { time: new Date(), part: '00001' });
 */

const TIME_TOKEN = /%(.)/g;
const PLACEHOLDER = /(?<!\{)\{([a-z-]+)\}(?!\})/g;
export const OBJECT_NAME_PLACEHOLDERS = ['part', 'source', 'generation'] as const;
const TIME_LETTERS = 'YmdHMSj%';

export interface ObjectNameValues {
  time: Date;
  part: string;
  source?: string;
  generation?: string;
}

/** Why the template cannot name objects, or undefined. */
export function objectNameProblem(template: string): string | undefined {
  for (const [, letter] of template.matchAll(TIME_TOKEN)) {
    if (!TIME_LETTERS.includes(letter!))
      return `%${letter} is not a time token (use %Y %m %d %H %M %S %j, or %% for a percent sign)`;
  }
  const names = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  const unknown = names.find((n) => !(OBJECT_NAME_PLACEHOLDERS as readonly string[]).includes(n));
  if (unknown !== undefined) return `{${unknown}} is not a placeholder (use {part}, {source}, {generation})`;
  if (!names.includes('part'))
    return 'must contain {part}: objects are written in parts, and the part keeps their names apart';
  if (names.includes('generation') && !names.includes('source'))
    return '{generation} needs {source} too: it is the generation of the source object';
  return undefined;
}

/** True when names derive from the source object: the output then writes each source's events apart. */
export function namesFollowSource(template: string): boolean {
  return [...template.matchAll(PLACEHOLDER)].some((m) => m[1] === 'source');
}

/** The distinct time tokens of the template, in order (`%%` is a percent sign, not one). */
export function timeTokens(template: string): string[] {
  const tokens = [...template.matchAll(TIME_TOKEN)]
    .map((m) => m[1]!)
    .filter((l) => TIME_LETTERS.includes(l) && l !== '%');
  return [...new Set(tokens)].map((letter) => `%${letter}`);
}

/** True when the template has time tokens (names then depend on the time). */
export function hasTimeTokens(template: string): boolean {
  return timeTokens(template).length > 0;
}

/**
 * Why names after the source would not repeat on a re-run, or undefined. The output fills
 * the time tokens from `time-field` of each part's first event when the field is set, else
 * from the clock when the part is started (functions/runner/outputs/gcs): with `{source}`
 * and no `time-field`, a re-run of the same source object writes it under new names, beside
 * the old ones. `timeField`: whether the output has one.
 */
export function sourceNameProblem(template: string, timeField: boolean): string | undefined {
  if (timeField || !namesFollowSource(template)) return undefined;
  const tokens = timeTokens(template);
  if (tokens.length === 0) return undefined;
  return `{source} names let a re-run overwrite the objects written before, but ${tokens.join(' ')} ${tokens.length === 1 ? 'takes' : 'take'} the time each part is started (there is no time-field), so a re-run writes new names beside the old ones: set time-field so the time comes from the events, or drop the time tokens`;
}

/**
 * Why `{source}` / `{generation}` cannot be filled with this job's input, or undefined:
 * only the `gcs` input reads objects; with another the runner writes `unknown` and `0` there.
 */
export function sourceInputProblem(template: string, inputKind: string): string | undefined {
  if (inputKind === 'gcs') return undefined;
  const names = new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!));
  const used = (['source', 'generation'] as const).filter((n) => names.has(n));
  if (used.length === 0) return undefined;
  const listed = used.map((n) => `{${n}}`).join(' and ');
  const written = used.map((n) => `${n === 'source' ? 'unknown' : '0'} for {${n}}`).join(' and ');
  return `${listed} name${used.length === 1 ? 's' : ''} each object after the object its events were read from, and the ${inputKind} input reads no objects (names would get ${written}): drop ${listed} ({part} alone keeps names apart), or read with a gcs input`;
}

export function renderObjectName(template: string, values: ObjectNameValues): string {
  return formatUtc(template, values.time).replace(PLACEHOLDER, (_, name: string) => {
    if (name === 'part') return values.part;
    if (name === 'source') return values.source ?? 'unknown';
    return values.generation ?? '0';
  });
}

/** Time tokens only, UTC; everything else is left as it is. */
export function formatUtc(template: string, time: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return template.replace(TIME_TOKEN, (token, letter: string) => {
    switch (letter) {
      case 'Y':
        return String(time.getUTCFullYear()).padStart(4, '0');
      case 'm':
        return two(time.getUTCMonth() + 1);
      case 'd':
        return two(time.getUTCDate());
      case 'H':
        return two(time.getUTCHours());
      case 'M':
        return two(time.getUTCMinutes());
      case 'S':
        return two(time.getUTCSeconds());
      case 'j': {
        const start = Date.UTC(time.getUTCFullYear(), 0, 1);
        return String(Math.floor((time.getTime() - start) / 86_400_000) + 1).padStart(3, '0');
      }
      case '%':
        return '%';
      default:
        return token;
    }
  });
}
