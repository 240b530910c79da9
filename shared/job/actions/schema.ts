/**
 * The `actions` of a job: a list applied in order to each event between the input and
 * the output. Each kind is declared here once (zod), with its description and an
 * example that the JSON Schema and the generated reference show. CEL expressions are
 * compiled and type-checked by the schema itself, so `sluice job validate`, the API and
 * staging all refuse a broken expression, pointing into it.
 *
 * At the saved level an expression holding a `{{key}}` reference is checked once the job
 * is rendered (context values are spliced into its text first).
 *
 * @example
 *   actionsSchema(fieldsFor('rendered')).parse([{ filter: 'event.status >= 500' }, { remove: ['debug'] }]);
 */
import { z } from 'zod';
import { exactlyOne, type Fields, TEMPLATE_PATTERN, wellFormedReferences } from '../fields.ts';
import { compileCel } from './cel.ts';
import { fieldPathProblem } from './paths.ts';
import { compileTimestampFormat } from './strftime.ts';

export const MAX_ACTIONS = 100;
export const MAX_EXPRESSION_LENGTH = 4096;

/** Marks where in an expression a problem is; `parse.ts` turns it into the file's line and column. */
export const EXPRESSION_OFFSET = / \(character (\d+) of the expression\)$/;

function expression(level: Fields['level'], description: string, options: { bool?: boolean } = {}) {
  return z
    .string()
    .min(1, 'an expression must not be empty')
    .max(MAX_EXPRESSION_LENGTH, `an expression may be at most ${MAX_EXPRESSION_LENGTH} characters`)
    .superRefine((source, ctx) => {
      // `min(1)` says it; CEL's "unexpected EOF" would say it again, less plainly.
      if (source === '') return;
      // Not built from fields.ts's string types, so references are checked here (not first at render).
      if (level !== 'rendered' && !wellFormedReferences(source, ctx)) return;
      if (level !== 'rendered' && TEMPLATE_PATTERN.test(source) && !source.includes('${secret|')) return;
      const compiled = compileCel(source);
      if (!compiled.ok) {
        ctx.addIssue({
          code: 'custom',
          message: `${compiled.message} (character ${compiled.offset + 1} of the expression)`,
        });
        return;
      }
      if (options.bool && compiled.type !== 'bool' && compiled.type !== 'dyn') {
        ctx.addIssue({
          code: 'custom',
          message: `a filter must be true or false (a bool expression); this one is ${compiled.type} (character 1 of the expression)`,
        });
      }
    })
    .describe(description);
}

const fieldPath = (description: string) =>
  z
    .string()
    .superRefine((text, ctx) => {
      const problem = fieldPathProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(description);

function fieldMap<V extends z.ZodType>(value: V, what: string) {
  return z.record(z.string(), value).superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length === 0) ctx.addIssue({ code: 'custom', message: `${what} needs at least one field` });
    for (const key of keys) {
      const problem = fieldPathProblem(key);
      if (problem) ctx.addIssue({ code: 'custom', path: [key], message: `key \`${key}\` ${problem}` });
    }
  });
}

/** Each action kind, declared once: its schema, description and an example. */
export function actionKinds(f: Fields) {
  return {
    filter: expression(
      f.level,
      'Keeps the event when this CEL expression is true, drops it when false. An evaluation error (a missing field read without has(), a type mismatch) drops the event and is counted.',
      { bool: true },
    ).meta({ examples: ['event.status >= 500 && has(event.path)'] }),
    set: fieldMap(expression(f.level, 'A CEL expression; its value becomes the field.'), 'set')
      .describe(
        'Sets fields (dotted paths create maps) to the values of CEL expressions, all evaluated on the event as it was before this action.',
      )
      .meta({ examples: [{ 'http.code': 'int(event.status)', source: 'job + "@" + worker' }] }),
    remove: z
      .array(fieldPath('A field to remove.'))
      .min(1, 'remove needs at least one field')
      .describe('Removes fields (missing ones are ignored).')
      .meta({ examples: [['debug', 'http.headers']] }),
    rename: fieldMap(fieldPath('The new name.'), 'rename')
      .describe('Renames fields: `from: to` (dotted paths on either side; missing fields are ignored).')
      .meta({ examples: [{ msg: 'message', 'req.id': 'request_id' }] }),
    keep: z
      .array(fieldPath('A field to keep.'))
      .min(1, 'keep needs at least one field')
      .describe('Keeps only these fields (dotted paths keep part of a map); drops all others.')
      .meta({ examples: [['ts', 'level', 'message']] }),
    'parse-json': fieldPath(
      'Parses the JSON text in this string field into its value (a field that is not a string is left alone; text that is not JSON is an evaluation error).',
    ).meta({ examples: ['payload'] }),
    'parse-timestamp': f
      .strict(
        {
          field: fieldPath('The string field holding the time; replaced by its RFC 3339 UTC form.'),
          format: z
            .string()
            .superRefine((format, ctx) => {
              if (f.level !== 'rendered' && !wellFormedReferences(format, ctx)) return;
              try {
                compileTimestampFormat(format);
              } catch (err) {
                ctx.addIssue({ code: 'custom', message: (err as Error).message });
              }
            })
            .describe(
              '`rfc3339`, or a strftime format: %Y %y %m %d %e %j %H %I %p %M %S %f %z %Z %b %B %a %A %s %T %F %%. Without %z or %Z the time is UTC.',
            ),
        },
        'parse-timestamp',
      )
      .describe(
        'Reads a time in the given format and writes it back as RFC 3339 UTC (2000-10-10T20:55:36.000Z); text that does not match is an evaluation error.',
      )
      .meta({ examples: [{ field: 'time', format: '%d/%b/%Y:%H:%M:%S %z' }] }),
  };
}

export type ActionKind = keyof ReturnType<typeof actionKinds>;

export function actionsSchema(f: Fields) {
  const kinds = actionKinds(f);
  const names = Object.keys(kinds);
  const action = f
    .strict(
      Object.fromEntries(Object.entries(kinds).map(([kind, schema]) => [kind, schema.optional()])) as {
        [K in keyof typeof kinds]: z.ZodOptional<(typeof kinds)[K]>;
      },
      'action',
    )
    .superRefine(exactlyOne('an action', names))
    .describe(`One key naming the action kind (${names.join(', ')}), whose value holds its fields.`);
  return z
    .array(action)
    .max(MAX_ACTIONS, `a job may have at most ${MAX_ACTIONS} actions`)
    .describe(
      'Applied in order to each event between the input and the output: filter, set, remove, rename, keep, parse-json, parse-timestamp. Expressions are CEL with the variables event (a map), job and worker. See docs/actions.md.',
    );
}

export type ActionsSchema = ReturnType<typeof actionsSchema>;
export type Action = z.output<ActionsSchema>[number];
