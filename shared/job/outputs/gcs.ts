/**
 * The `gcs` output: writes events as Cloud Storage objects, each uploaded whole (an object
 * appears under its name only once complete). This declaration is the single source of
 * its validation, types, defaults, JSON Schema and reference page.
 */
import { z } from 'zod';
import { objectNameProblem, sourceNameProblem } from '../../object-name-template.ts';
import { googleCredentialsSchema } from '../credentials.ts';
import type { Fields } from '../fields.ts';
import { BUCKET_NAME } from '../inputs/gcs.ts';
import { batchingFields } from './batching.ts';

export const GCS_OUTPUT_FORMATS = ['ndjson', 'json-array', 'raw'] as const;
export const COMPRESSIONS = ['none', 'gzip'] as const;

export function gcsOutputSchema(f: Fields) {
  return f
    .strict(
      {
        'bucket-name': f.typed(
          z
            .string()
            .regex(
              BUCKET_NAME,
              'must be a bucket name: 3-63 lowercase letters, digits, dashes, dots or underscores',
            ),
          'Bucket to write to.',
        ),
        credentials: googleCredentialsSchema(f, 'output.gcs.credentials').optional(),
        'object-name': f.typed(
          z
            .string()
            .min(1)
            .superRefine((template, ctx) => {
              const problem = objectNameProblem(template);
              if (problem) ctx.addIssue({ code: 'custom', message: problem });
            }),
          'Name of each object written: time tokens %Y %m %d %H %M %S %j (UTC; from `time-field` of the first event, else the time the object was started), {part} (required), {source} and {generation} (the object the events were read from, with a gcs input: a re-run then overwrites the same objects instead of writing duplicates; refused with another input, and with time tokens unless time-field is set, since clock times give a re-run new names). E.g. logs/%Y/%m/%d/{{job}}-{part}.ndjson.gz.',
        ),
        format: f
          .enumOf(
            GCS_OUTPUT_FORMATS,
            'ndjson: one JSON event per line; json-array: one JSON array per object; raw: the `_raw` field of each event as a line (other events as JSON).',
          )
          .default('ndjson'),
        compression: f.enumOf(COMPRESSIONS, 'Compression of each object.').default('none'),
        ...batchingFields(f, {
          maxBytes: '8MiB',
          largestBytes: 64 * 1024 ** 2,
          maxEvents: 100_000,
          maxAge: '60s',
        }),
        'content-type': f
          .string(
            'Content type of the objects; default by format and compression (application/x-ndjson, application/json, text/plain, application/gzip).',
          )
          .optional(),
        'time-field': f
          .fieldName(
            'Event field holding the time (RFC 3339 or epoch milliseconds) that fills the time tokens; events of different times go to different objects.',
          )
          .optional(),
      },
      'output.gcs',
    )
    .superRefine((value, ctx) => {
      // On the text as written (saved levels: a {{...}} reference may hide more, found when
      // the job is rendered, which validates the rendered text again).
      const template = value['object-name'];
      if (typeof template !== 'string') return;
      const problem = sourceNameProblem(template, value['time-field'] !== undefined);
      if (problem) ctx.addIssue({ code: 'custom', path: ['object-name'], message: problem });
    })
    .describe('Writes events as objects in a Cloud Storage bucket, in batches.');
}
