/**
 * `npm run build:schema`: writes the job files' JSON Schema and the job-language
 * reference page, both generated from the zod schemas. A test fails when the committed
 * files are out of date.
 */
import { writeFileSync } from 'node:fs';
import { jobJsonSchema } from '../shared/job/json-schema.ts';
import { jobReferenceMarkdown } from '../shared/job/reference.ts';

export const JOB_SCHEMA_PATH = 'docs/job.schema.json';
export const JOB_REFERENCE_PATH = 'docs/job-language.md';

export function renderedSchemaFile(): string {
  return JSON.stringify(jobJsonSchema(), null, 2) + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(JOB_SCHEMA_PATH, renderedSchemaFile());
  writeFileSync(JOB_REFERENCE_PATH, jobReferenceMarkdown());
  console.log(`wrote ${JOB_SCHEMA_PATH} and ${JOB_REFERENCE_PATH}`);
}
