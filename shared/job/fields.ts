/**
 * Building blocks of the job schemas, each declared once and used at both validation
 * levels (CONTRACT section 3): at the *saved* level a string holding a `{{...}}`
 * reference is accepted wherever a typed value is expected, because context fills it
 * in later; at the *rendered* level every value must have its real type.
 *
 * @example
 *   const f = fieldsFor('saved');
 *   const schema = f.strict({ timeout: f.duration('how long to wait').default('30s') }, 'retry');
 */
import { Cron } from 'croner';
import { z } from 'zod';
import { parseDuration } from '../duration.ts';
import { compileSafeRegex, MAX_REGEX_SIZE } from '../regex.ts';
import { parseStartTime } from '../time-format.ts';
import { referenceProblem } from './reference-syntax.ts';
import { closest } from './suggest.ts';

/**
 * `stored` is `saved` plus the rules of a job kept in the control plane (which runs on
 * hosts its author does not own): no local file paths.
 */
export type Level = 'saved' | 'stored' | 'rendered';

/** A string that is, or contains, a `{{key}}` context reference (not the escaped `\{{`). */
export const TEMPLATE_PATTERN = /(^|[^\\])\{\{[^}]*\}\}/;
export const TemplateString = z
  .string()
  .regex(TEMPLATE_PATTERN)
  .describe('a {{key}} context reference, resolved when the job is rendered');

/**
 * At the saved levels a string given to a field type of this module (`string` and every
 * templatable one) holds only well-formed `{{key}}`, `${secret|...}` and `${dyn|...}`
 * references (reference-syntax.ts); false, and the issue added, when it does not.
 */
export function wellFormedReferences(text: string, ctx: z.RefinementCtx): boolean {
  const problem = referenceProblem(text);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
  return problem === undefined;
}

/**
 * Whether any string of a parsed job (a value or a key) holds a `{{...}}` reference. Without
 * one, the saved and the rendered level judge the job alike: the saved level differs only
 * where a reference stands in for a value. Iterative: a job file may nest deeply.
 */
export function containsReference(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (TEMPLATE_PATTERN.test(item)) return true;
    } else if (Array.isArray(item)) {
      // One at a time: spread into push, a list of some 100,000 items overflows the stack.
      for (const member of item) pending.push(member);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, member] of Object.entries(item)) pending.push(key, member);
    }
  }
  return false;
}

/** Saved-level wrappers and the schema they stand for (for the JSON Schema: value or template). */
export const TEMPLATABLE = new WeakMap<z.ZodType, z.ZodType>();

export const FIELD_NAME = /^[A-Za-z_@][A-Za-z0-9_@.-]{0,127}$/;
export const CONTEXT_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;

export function fieldsFor(level: Level) {
  /**
   * At the saved level, also accept a `{{...}}` string in place of the value. Not a zod
   * union: a union reports the template alternative's complaint ("must match {{...}}")
   * instead of the real one, so the real schema is run and its issues passed on as they are.
   * A malformed reference (reference-syntax.ts) is the one complaint about such a string.
   */
  const templatable = <T extends z.ZodType>(schema: T): T => {
    if (level === 'rendered') return schema;
    const wrapped = z.unknown().superRefine((value, ctx) => {
      if (typeof value === 'string' && !wellFormedReferences(value, ctx)) return;
      if (typeof value === 'string' && TEMPLATE_PATTERN.test(value)) return;
      // The common case is valid: check cheaply first, and only re-run to collect inputs for messages.
      if (schema.safeParse(value).success) return;
      const result = schema.safeParse(value, { reportInput: true });
      if (!result.success) for (const issue of result.error.issues) ctx.addIssue(issue as never);
    });
    const described = schema.description ? wrapped.describe(schema.description) : wrapped;
    TEMPLATABLE.set(described, schema);
    return described as unknown as T;
  };

  const typed = <T extends z.ZodType>(schema: T, description: string): T =>
    templatable(schema.describe(description) as T);

  /** An object that refuses unknown keys, suggesting the closest known one. */
  const strict = <S extends z.ZodRawShape>(shape: S, where: string) =>
    z.strictObject(shape, {
      error: (issue) => {
        if (issue.code === 'unrecognized_keys')
          return unknownKeysMessage(issue.keys, Object.keys(shape), where);
        if (issue.code === 'invalid_type' && issue.input === undefined) {
          return `required field \`${where.split('.').pop()}\` is missing`;
        }
        if (issue.code === 'invalid_type')
          return `${where} must be a map of fields, not ${describeValue(issue.input)}`;
        return undefined;
      },
    });

  return {
    level,
    templatable,
    typed,
    strict,
    /** Rendered text is checked by renderJob: a `\{{` there has become a literal `{{`. */
    string: (description: string) =>
      (level === 'rendered'
        ? z.string()
        : z.string().superRefine((text, ctx) => {
            wellFormedReferences(text, ctx);
          })
      ).describe(description),
    boolean: (description: string) => templatable(z.boolean().describe(description)),
    integer: (description: string, min = 0) => templatable(z.number().int().min(min).describe(description)),
    enumOf: <const T extends readonly [string, ...string[]]>(values: T, description: string) =>
      templatable(
        z
          .enum(values, { error: (issue) => enumMessage(String(issue.input), values) })
          .describe(`${description} One of: ${values.join(', ')}.`),
      ),
    /** `positive`: zero is refused too (a wait of 0 between polls would poll without pause). */
    duration: (description: string, options: { bareSeconds?: boolean; positive?: boolean } = {}) =>
      typed(
        (options.bareSeconds ? z.union([z.string(), z.number().nonnegative()]) : z.string()).superRefine(
          (value, ctx) => {
            try {
              const ms = parseDuration(value as string | number, options);
              if (options.positive && ms === 0)
                ctx.addIssue({ code: 'custom', message: 'must be more than 0, e.g. 1s or 500ms' });
            } catch (err) {
              ctx.addIssue({ code: 'custom', message: (err as Error).message });
            }
          },
        ),
        `${description} A duration such as 500ms, 5m, 1h30m or 30d.`,
      ),
    regex: (description: string, requiredGroups: readonly string[] = []) =>
      typed(
        z.string().superRefine((pattern, ctx) => {
          try {
            const compiled = compileSafeRegex(pattern);
            const missing = requiredGroups.filter((g) => !compiled.groupNames.includes(g));
            if (missing.length) {
              ctx.addIssue({
                code: 'custom',
                message: `the pattern needs named groups ${missing.map((g) => `(?P<${g}>...)`).join(', ')}`,
              });
            }
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
          }
        }),
        `${description} RE2 syntax (linear time; no backreferences or lookaround); its repetitions may expand to at most ${MAX_REGEX_SIZE.toLocaleString('en-US')} steps.`,
      ),
    fieldName: (description: string) =>
      typed(
        z.string().regex(FIELD_NAME, 'must be a field name: letters, digits, _ @ . - (e.g. object_name)'),
        description,
      ),
    cron: (description: string) =>
      typed(
        z.string().superRefine((expression, ctx) => {
          const parts = expression.trim().split(/\s+/).length;
          if (parts !== 5 && parts !== 6) {
            ctx.addIssue({
              code: 'custom',
              message: `a cron expression has 5 fields (minute hour day month weekday), or 6 with seconds first; got ${parts}`,
            });
            return;
          }
          try {
            new Cron(expression, { paused: true }).stop();
          } catch (err) {
            ctx.addIssue({
              code: 'custom',
              message: `invalid cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`,
            });
          }
        }),
        description,
      ),
    startTime: (description: string) =>
      typed(
        z.string().superRefine((text, ctx) => {
          try {
            parseStartTime(text);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
          }
        }),
        description,
      ),
  };
}

export type Fields = ReturnType<typeof fieldsFor>;

/** Checks that exactly one of an object's optional keys is set (input kinds, trigger forms, one-of options). */
export function exactlyOne(what: string, keys: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const present = keys.filter((k) => value[k] !== undefined);
    if (present.length === 1) return;
    ctx.addIssue({
      code: 'custom',
      message:
        present.length === 0
          ? `${what} needs exactly one of: ${keys.join(', ')}`
          : `${what} takes exactly one of ${keys.join(', ')}; found ${present.join(' and ')}`,
    });
  };
}

/** All of a map's unknown keys, one part each (zod raises one issue for all of them). */
export function unknownKeysMessage(keys: readonly string[], known: readonly string[], where: string): string {
  return keys.map((key) => unknownKeyMessage(key, known, where)).join(UNKNOWN_KEYS_SEPARATOR);
}

/**
 * Each key's own part of an `unknownKeysMessage`, in the order of `keys`, so that each
 * unknown key can be reported at its own path. A message not built here (no part found
 * for some key) gives each key the plain "unknown field".
 */
export function unknownKeyMessages(message: string, keys: readonly string[]): string[] {
  if (keys.length === 1) return [message];
  const starts: number[] = [];
  for (const key of keys) {
    const start = message.indexOf(unknownKeyPrefix(key), (starts.at(-1) ?? -1) + 1);
    if (start < 0) return keys.map((k) => `unknown field \`${k}\``);
    starts.push(start);
  }
  return starts.map((start, i) =>
    message.slice(start, i + 1 < starts.length ? starts[i + 1]! - UNKNOWN_KEYS_SEPARATOR.length : undefined),
  );
}

const UNKNOWN_KEYS_SEPARATOR = '; ';

function unknownKeyMessage(key: string, known: readonly string[], where: string): string {
  // A map that takes no fields (`print: {}`) has no list to offer.
  if (known.length === 0) return `${unknownKeyPrefix(key)}${where}, which takes no fields`;
  const guess = closest(key, known);
  return `${unknownKeyPrefix(key)}${where}${guess ? `; did you mean \`${guess}\`?` : `; known fields: ${known.join(', ')}`}`;
}

function unknownKeyPrefix(key: string): string {
  return `unknown field \`${key}\` at `;
}

export function enumMessage(input: string, values: readonly string[]): string {
  const guess = closest(input, values);
  return `\`${input}\` is not allowed here${guess ? `; did you mean \`${guess}\`?` : ''} (one of: ${values.join(', ')})`;
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `${typeof value === 'string' ? 'a string' : `a ${typeof value}`} (${JSON.stringify(value)})`;
}
