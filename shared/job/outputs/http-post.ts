/** The `http-post` output: sends events to a URL in batches, with retries. */
import { z } from 'zod';
import type { Fields } from '../fields.ts';
import { batchingFields } from './batching.ts';

export const HTTP_POST_FORMATS = ['ndjson', 'json-array'] as const;

export function httpPostOutputSchema(f: Fields) {
  return f
    .strict(
      {
        url: f.typed(
          z
            .string()
            .refine((u) => /^https?:\/\//.test(u) && URL.canParse(u), 'must be an http:// or https:// URL'),
          'Where batches are POSTed. Connections follow the same egress rules as http-poll: link-local and metadata addresses are always refused, loopback and private ones unless the runner allows them (SLUICE_EGRESS_ALLOW).',
        ),
        headers: z
          .record(z.string(), f.string('Header value.'))
          .default({})
          .describe('Request headers (secrets allowed: ${secret|...}).'),
        format: f
          .enumOf(
            HTTP_POST_FORMATS,
            'ndjson: one JSON event per line; json-array: one JSON array per request.',
          )
          .default('ndjson'),
        gzip: f.boolean('Compress request bodies (Content-Encoding: gzip).').default(false),
        ...batchingFields(f, {
          maxBytes: '1MiB',
          largestBytes: 32 * 1024 ** 2,
          maxEvents: 1_000,
          maxAge: '1s',
        }),
        timeout: f
          .duration('Time allowed for one request; a request that takes longer is retried.')
          .default('30s'),
        retries: f
          .integer(
            'Retries of a batch after 429, 5xx, a timeout or a connection error (with backoff, honouring Retry-After).',
          )
          .default(5),
      },
      'output.http-post',
    )
    .describe(
      'POSTs events to a URL in batches. 429, 5xx and connection errors are retried; other answers fail the run with a job-errors event (the input then commits nothing, so the batch is sent again on the next run).',
    );
}
