/**
 * Building blocks of the job schemas, each declared once and used at both validation
 * levels (CONTRACT section 3): at the *saved* level a `{{...}}` reference is accepted
 * wherever a typed value is expected, because context fills it in later; at the
 * *rendered* level every value must have its real type.
 *
 * Where a reference may stand:
 * - a number, boolean, duration, enum or other single value (`templatable`): any string
 *   holding a reference, since text may render to the value (`'{{minutes}}m'`);
 * - a map, list or choice that is a field of a map (every field of `strict`, at any depth):
 *   a string that is exactly one reference (`'{{names}}'`), which renders to the context
 *   value with its JSON type. Inside longer text a reference renders to text, never to a
 *   map or list, so such a string is judged by the field's own schema (and refused).
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
import { isWholeReference, referenceProblem } from './reference-syntax.ts';
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

/**
 * The outline of a string that is exactly one reference, for the JSON Schema of job files
 * (editors); `isWholeReference` (reference-syntax.ts) decides, as rendering does.
 */
export const WHOLE_REFERENCE_PATTERN = /^\{\{[^{}]*\}\}$/;

/**
 * Saved-level wrappers, the schema each stands for and which references it takes in its
 * place (for the JSON Schema: the value, or a template; `whole`: only a whole reference).
 */
export const TEMPLATABLE = new WeakMap<z.ZodType, { schema: z.ZodType; whole: boolean }>();

/** The schema a saved-level wrapper stands for, also through its clones (`.describe()`). */
export function templatableOf(schema: z.ZodType): { schema: z.ZodType; whole: boolean } | undefined {
  for (let s: z.ZodType | undefined = schema; s; s = s._zod.parent as z.ZodType | undefined) {
    const found = TEMPLATABLE.get(s);
    if (found) return found;
  }
  return undefined;
}

/**
 * Rules of the `stored` level that rendering does not check again (`storedRule`): the check
 * and why a whole reference may not stand for a value it applies to.
 */
const STORED_RULES = new WeakMap<object, string>();

/**
 * Why a value of `schema` may not come whole from a reference at the stored level: a rule
 * of that level applies inside it (`storedRule`), and rendering, which checks the value
 * the reference brings in, does not check that rule again. Undefined when none applies.
 * Remembered per schema: each map asks it of its fields, and they of theirs.
 */
function storedRuleWithin(schema: z.ZodType): string | undefined {
  if (STORED_RULE_WITHIN.has(schema)) return STORED_RULE_WITHIN.get(schema);
  STORED_RULE_WITHIN.set(schema, undefined);
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const inside: z.ZodType[] = [];
  const wrapped = templatableOf(schema);
  if (wrapped) inside.push(wrapped.schema);
  for (const key of ['innerType', 'element', 'keyType', 'valueType', 'in', 'out', 'left', 'right'])
    if (def[key]) inside.push(def[key] as z.ZodType);
  for (const key of ['shape', 'options'])
    if (def[key]) inside.push(...(Object.values(def[key] as object) as z.ZodType[]));
  let why: string | undefined;
  for (const check of (def.checks as object[] | undefined) ?? []) why ??= STORED_RULES.get(check);
  for (const member of inside) why ??= storedRuleWithin(member);
  STORED_RULE_WITHIN.set(schema, why);
  return why;
}
const STORED_RULE_WITHIN = new WeakMap<z.ZodType, string | undefined>();

export const FIELD_NAME = /^[A-Za-z_@][A-Za-z0-9_@.-]{0,127}$/;
export const CONTEXT_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;

export function fieldsFor(level: Level) {
  /**
   * At the saved level, also accept a `{{...}}` string in place of the value: any string
   * holding a reference, or with `whole` (a map, list or choice) only a string that is
   * exactly one. Not a zod union: a union reports the template alternative's complaint
   * ("must match {{...}}") instead of the real one, so the real schema is run and its issues
   * passed on as they are. A malformed reference (reference-syntax.ts) is the one complaint
   * about a string holding one.
   *
   * At the stored level a whole reference may not stand for a value that a rule of that level
   * applies inside (`storedRule`): rendering checks what the reference brings in at the
   * rendered level, which does not know that rule.
   */
  const templatable = <T extends z.ZodType>(schema: T, options: { whole?: boolean } = {}): T => {
    if (level === 'rendered') return schema;
    const whole = options.whole === true;
    const storedRule = whole && level === 'stored' ? storedRuleWithin(schema) : undefined;
    const wrapped = z.unknown().superRefine((value, ctx) => {
      if (typeof value === 'string') {
        // A map or list field judges text without a `{{` as its schema does (a type error).
        if ((!whole || value.includes('{{')) && !wellFormedReferences(value, ctx)) return;
        if (whole ? isWholeReference(value) : TEMPLATE_PATTERN.test(value)) {
          if (storedRule)
            ctx.addIssue({
              code: 'custom',
              message: `may not come whole from a {{key}} reference in a job saved to the control plane: ${storedRule}`,
            });
          return;
        }
      }
      // The common case is valid: check cheaply first, and only re-run to collect inputs for messages.
      if (schema.safeParse(value).success) return;
      const result = schema.safeParse(value, { reportInput: true });
      if (!result.success) for (const issue of result.error.issues) ctx.addIssue(issue as never);
    });
    const described = schema.description ? wrapped.describe(schema.description) : wrapped;
    TEMPLATABLE.set(described, { schema, whole });
    return described as unknown as T;
  };

  /**
   * A field of a map at the saved level: a map, list or choice also takes a whole reference
   * (`templatable` with `whole`). Its `.optional()` and `.default()` stay outside, so that the
   * field stays optional and keeps its default; text fields take any text already, and
   * single values (`templatable`) any reference.
   */
  const referable = (field: z.ZodType): z.ZodType => {
    const def = field._zod.def as unknown as { type: string; innerType?: z.ZodType; defaultValue?: unknown };
    if ((def.type === 'optional' || def.type === 'default') && def.innerType) {
      const inner = referable(def.innerType);
      if (inner === def.innerType) return field;
      const rebuilt = def.type === 'optional' ? inner.optional() : inner.default(() => def.defaultValue);
      const meta = z.globalRegistry.get(field);
      return meta ? rebuilt.meta(meta) : rebuilt;
    }
    if (def.type === 'string' || templatableOf(field)) return field;
    return templatable(field, { whole: true });
  };

  const typed = <T extends z.ZodType>(schema: T, description: string): T =>
    templatable(schema.describe(description) as T);

  /**
   * An object that refuses unknown keys, suggesting the closest known one. At the saved
   * levels each of its fields may be a whole reference (`referable`), unless `literal`: the
   * job's own top level (`name` and `context` are not rendered, and the server reads which
   * input and output a job has from the definition as saved).
   */
  const strict = <S extends z.ZodRawShape>(shape: S, where: string, options: { literal?: boolean } = {}) =>
    z.strictObject(
      level === 'rendered' || options.literal
        ? shape
        : (Object.fromEntries(
            Object.entries(shape).map(([key, field]) => [key, referable(field as z.ZodType)]),
          ) as unknown as S),
      {
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
      },
    );

  /**
   * A rule that only the `stored` level checks (a job kept in the control plane, which runs
   * on machines its author does not own), as a check for `.check()`: it does nothing at the
   * other levels. Rendering does not check it again, so at the stored level no whole
   * reference may stand for a value it applies to; `why` says why, for that refusal.
   */
  const storedRule = <T>(why: string, rule: (value: T, ctx: z.RefinementCtx<T>) => void) => {
    const check = z.superRefine<T>((value, ctx) => {
      if (level === 'stored') rule(value, ctx);
    });
    if (level === 'stored') STORED_RULES.set(check, why);
    return check;
  };

  return {
    level,
    templatable,
    typed,
    strict,
    storedRule,
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
