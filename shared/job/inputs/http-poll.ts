/** The `http-poll` input: requests a URL on its trigger and emits the answer. */
import { z } from 'zod';
import { formatByteSize, parseByteSize } from '../../byte-size.ts';
import type { Fields } from '../fields.ts';
import { triggerSchema } from '../triggers.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export const DEFAULT_MAX_RESPONSE_SIZE = '16MiB';
/** A runner holds a whole answer in memory (the cloud worker shares its memory with every tenant). */
export const LARGEST_MAX_RESPONSE_BYTES = 256 * 1024 ** 2;

export function httpPollInputSchema(f: Fields) {
  return f
    .strict(
      {
        url: f.typed(
          z
            .string()
            .refine((u) => /^https?:\/\//.test(u) && URL.canParse(u), 'must be an http:// or https:// URL'),
          'The URL to request. Connections to link-local and metadata addresses are always refused, to loopback and private addresses unless the runner allows them (SLUICE_EGRESS_ALLOW); redirects are followed (at most 5) and checked the same way.',
        ),
        method: f.enumOf(HTTP_METHODS, 'HTTP method.').default('GET'),
        headers: z.record(z.string(), f.string('Header value.')).default({}).describe('Request headers.'),
        body: f.string('Request body, for POST/PUT/PATCH.').optional(),
        json: f
          .boolean('Parse the answer as JSON: an array gives one event per element, an object one event.')
          .default(false),
        timeout: f.duration('Time allowed for one request.').default('30s'),
        'max-response-size': f
          .typed(
            z.union([z.string(), z.number().int().nonnegative()]).superRefine((value, ctx) => {
              try {
                const bytes = parseByteSize(value);
                if (bytes > LARGEST_MAX_RESPONSE_BYTES)
                  ctx.addIssue({
                    code: 'custom',
                    message: `may be at most ${formatByteSize(LARGEST_MAX_RESPONSE_BYTES)}`,
                  });
              } catch (err) {
                ctx.addIssue({ code: 'custom', message: (err as Error).message });
              }
            }),
            `Largest answer read; a larger one fails the run with a job-errors event. Bytes, or a size such as 512KiB, 16MiB (at most ${formatByteSize(LARGEST_MAX_RESPONSE_BYTES)}).`,
          )
          .default(DEFAULT_MAX_RESPONSE_SIZE),
        trigger: triggerSchema(f).optional(),
      },
      'input.http-poll',
    )
    .superRefine((value, ctx) => {
      // One request per run, and the request has no time range to ask for: each window of a
      // runner catching up would send the same request again (5 windows, 5 identical GETs).
      for (const schedule of ['interval', 'cron'] as const) {
        if (value.trigger?.[schedule]?.window)
          ctx.addIssue({
            code: 'custom',
            path: ['trigger', schedule, 'window'],
            message:
              'windows are for inputs that read by time (gcs reads the objects stamped in each window); http-poll sends one request per run, the same for every window: remove window',
          });
      }
    })
    .describe('Polls an HTTP endpoint on its trigger and emits what it answers.');
}
