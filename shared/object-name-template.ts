/**
 * Names of the objects the `gcs` output writes: a template with time tokens (`%Y`, `%m`,
 * `%d`, `%H`, `%M`, `%S`, `%j`, `%%`; UTC) and placeholders in single braces: `{part}`
 * (required: it keeps names apart), `{source}` and `{generation}` (the object the events
 * were read from, for `gcs` → `gcs`: a re-run then writes the same names, overwriting
 * instead of duplicating). `{{...}}` context references are rendered before this.
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

/** True when the template has time tokens (names then depend on the time). */
export function hasTimeTokens(template: string): boolean {
  return [...template.matchAll(TIME_TOKEN)].some((m) => m[1] !== '%');
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
