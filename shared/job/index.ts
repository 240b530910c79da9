/** The job definition language: schemas, parsing and validation (pure; runs anywhere). */
export { containsReference, type Level, TEMPLATE_PATTERN } from './fields.ts';
export { MAX_JOB_FILE_BYTES, type ParseResult, parseJobYaml } from './parse.ts';
export {
  type GcsInput,
  type HttpPollInput,
  INPUT_KIND_NAMES,
  JOB_NAME,
  type JobDefinition,
  type JobDefinitionInput,
  jobSchema,
  OUTPUT_KIND_NAMES,
  type Trigger,
} from './schema.ts';
export { issuesToJobErrors, type ValidationResult, validateJob } from './validate.ts';
