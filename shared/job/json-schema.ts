/**
 * The JSON Schema of job files, generated from the saved-level zod schema, so that
 * editors (yaml-language-server) check and complete exactly what Sluice accepts.
 * Draft 2020-12, which yaml-language-server supports.
 *
 * @example
 *   writeFileSync('docs/job.schema.json', JSON.stringify(jobJsonSchema(), null, 2));
 */
import { z } from 'zod';
import { TEMPLATE_PATTERN, templatableOf, WHOLE_REFERENCE_PATTERN } from './fields.ts';
import { jobSchema } from './schema.ts';

type JsonSchema = Record<string, unknown>;

export const JOB_SCHEMA_ID = 'https://sluice.dev/schemas/job.schema.json';

export function jobJsonSchema(): JsonSchema {
  const schema = toJson(jobSchema('saved'));
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: JOB_SCHEMA_ID,
    title: 'Sluice job',
    ...schema,
  };
}

function toJson(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const wrapped = templatableOf(ctx.zodSchema as unknown as z.ZodType);
      if (!wrapped) return;
      const { $schema: _, ...value } = toJson(wrapped.schema);
      for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
      Object.assign(ctx.jsonSchema, {
        ...(value.description ? { description: value.description } : {}),
        ...(value.examples ? { examples: value.examples } : {}),
        anyOf: [
          value,
          wrapped.whole
            ? {
                type: 'string',
                pattern: WHOLE_REFERENCE_PATTERN.source,
                description: 'a {{key}} context reference alone, replaced by the value with its JSON type',
              }
            : {
                type: 'string',
                pattern: TEMPLATE_PATTERN.source,
                description: 'a {{key}} context reference',
              },
        ],
      });
    },
  }) as JsonSchema;
  return json;
}
