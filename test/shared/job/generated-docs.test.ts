import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JOB_REFERENCE_PATH, JOB_SCHEMA_PATH, renderedSchemaFile } from '../../../scripts/build-schema.ts';
import { jobReferenceMarkdown } from '../../../shared/job/reference.ts';

describe('generated job-language files', () => {
  it('docs/job.schema.json matches the zod schemas (run `npm run build:schema` after changing them)', () => {
    expect(readFileSync(JOB_SCHEMA_PATH, 'utf8')).toBe(renderedSchemaFile());
  });

  it('docs/job-language.md matches the zod schemas (run `npm run build:schema` after changing them)', () => {
    expect(readFileSync(JOB_REFERENCE_PATH, 'utf8')).toBe(jobReferenceMarkdown());
  });

  it('documents every gcs field of the seed', () => {
    const reference = jobReferenceMarkdown();
    for (const field of [
      'payload-mode',
      'credentials',
      'mode',
      'ignore-linebreaks',
      'timestamp-mode',
      'maximum-age',
      'include-regex',
      'exclude-regex',
      'bucket-name',
      'object-names',
      'object-name-field',
      'creation-time-field',
      'last-modified-field',
      'content-length-field',
      'content-type-field',
      'etag-field',
      'data-field',
      'preprocessors',
      'fingerprinting',
      'maximum-fingerprint-age',
      'retry',
      'trigger',
    ]) {
      expect(reference).toContain(`\`input.gcs.${field}\``);
    }
  });
});
