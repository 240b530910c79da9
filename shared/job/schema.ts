/**
 * The job definition: `name`, `context`, `input` (one kind), `output` (one kind),
 * built once per validation level from the component declarations in `inputs/` and
 * `outputs/`. Adding an input kind means adding one module and one line in `INPUT_KINDS`.
 *
 * @example
 *   const result = jobSchema('rendered').safeParse(value);
 */
import { z } from 'zod';
import { isPrototypeName, PROTOTYPE_NAME_MESSAGE, RESOURCE_ID } from '../auth/names.ts';
import { keyProblem } from '../context/map.ts';
import { actionsSchema } from './actions/schema.ts';
import { CONTEXT_KEY, exactlyOne, type Fields, fieldsFor, type Level } from './fields.ts';
import { gcsInputSchema } from './inputs/gcs.ts';
import { httpPollInputSchema } from './inputs/http-poll.ts';
import { discardOutputSchema } from './outputs/discard.ts';
import { fileOutputSchema } from './outputs/file.ts';
import { gcsOutputSchema } from './outputs/gcs.ts';
import { httpPostOutputSchema } from './outputs/http-post.ts';
import { printOutputSchema } from './outputs/print.ts';
import { pubsubOutputSchema } from './outputs/pubsub.ts';

/** Job names follow the rule of every resource name (worker ids, secret names, ...). */
export const JOB_NAME = RESOURCE_ID;

/**
 * A job name, wherever one comes in (the definition's `name`, `/api/jobs/{name}`, the
 * contexts routes): names every object answers to, like `constructor`, are refused here once.
 */
export const JobName = z
  .string()
  .regex(JOB_NAME, 'job names start with a letter or digit and use only letters, digits, . _ - (at most 128)')
  .refine((name) => !isPrototypeName(name), PROTOTYPE_NAME_MESSAGE);

const INPUT_KINDS = { gcs: gcsInputSchema, 'http-poll': httpPollInputSchema } as const;
const OUTPUT_KINDS = {
  print: printOutputSchema,
  gcs: gcsOutputSchema,
  pubsub: pubsubOutputSchema,
  'http-post': httpPostOutputSchema,
  file: fileOutputSchema,
  discard: discardOutputSchema,
} as const;
export type InputKind = keyof typeof INPUT_KINDS;
export type OutputKind = keyof typeof OUTPUT_KINDS;
export const INPUT_KIND_NAMES = Object.keys(INPUT_KINDS) as InputKind[];
export const OUTPUT_KIND_NAMES = Object.keys(OUTPUT_KINDS) as OutputKind[];

function buildJobSchema(level: Level) {
  const f = fieldsFor(level);
  const kinds = <K extends Record<string, (f: Fields) => z.ZodType>>(registry: K, what: 'input' | 'output') =>
    f
      .strict(
        Object.fromEntries(Object.entries(registry).map(([kind, build]) => [kind, build(f).optional()])) as {
          [P in keyof K]: z.ZodOptional<ReturnType<K[P]>>;
        },
        what,
      )
      .superRefine(exactlyOne(`${what}`, Object.keys(registry)))
      .describe(
        `One key naming the ${what} kind (${Object.keys(registry).join(', ')}), whose value holds its fields.`,
      );

  return f
    .strict(
      {
        name: JobName.describe('The job name.'),
        context: z
          .record(
            // The rules of every context map's keys (shared/context/map.ts), declared there once.
            z
              .string()
              .regex(CONTEXT_KEY, 'context keys start with a letter or _ and use letters, digits, _ -')
              .superRefine((k, ctx) => {
                const problem = CONTEXT_KEY.test(k) ? keyProblem(k) : undefined;
                if (problem) ctx.addIssue({ code: 'custom', message: problem });
              }),
            z.json(),
          )
          .optional()
          .describe('Default context values (lowest precedence); referenced as {{key}} in input and output.'),
        input: kinds(INPUT_KINDS, 'input'),
        actions: actionsSchema(f).optional(),
        output: kinds(OUTPUT_KINDS, 'output'),
      },
      'the job',
      // Written out: `name` and `context` are not rendered, and the server reads which input and
      // output a job has from it as saved; the fields inside them may be whole references.
      { literal: true },
    )
    .describe('A Sluice job definition.');
}

type JobSchema = ReturnType<typeof buildJobSchema>;

// Built on first use: constructing them costs tens of milliseconds, which every cold start
// that merely imports a name from this module (JOB_NAME) would otherwise pay.
const SCHEMAS: Partial<Record<Level, JobSchema>> = {};

export function jobSchema(level: Level) {
  SCHEMAS[level] ??= buildJobSchema(level);
  return SCHEMAS[level];
}

export type JobDefinition = z.output<JobSchema>;
export type JobDefinitionInput = z.input<JobSchema>;
export type GcsInput = NonNullable<JobDefinition['input']['gcs']>;
export type HttpPollInput = NonNullable<JobDefinition['input']['http-poll']>;
export type Trigger = NonNullable<GcsInput['trigger']>;
export type GcsOutput = NonNullable<JobDefinition['output']['gcs']>;
export type PubsubOutput = NonNullable<JobDefinition['output']['pubsub']>;
export type HttpPostOutput = NonNullable<JobDefinition['output']['http-post']>;
export type FileOutput = NonNullable<JobDefinition['output']['file']>;

/** The trigger of a job's input, whichever kind the input is (absent: the input runs once). */
export function triggerOf(definition: Pick<JobDefinition, 'input'>): Trigger | undefined {
  for (const kind of Object.values(definition.input) as ({ trigger?: Trigger } | undefined)[]) {
    if (kind?.trigger) return kind.trigger;
  }
  return undefined;
}
