/** The `http-poll` input: requests a URL on its trigger and emits the answer. */
import { z } from 'zod';
import type { Fields } from '../fields.ts';
import { triggerSchema } from '../triggers.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

export function httpPollInputSchema(f: Fields) {
  return f
    .strict(
      {
        url: f.typed(
          z
            .string()
            .refine((u) => /^https?:\/\//.test(u) && URL.canParse(u), 'must be an http:// or https:// URL'),
          'The URL to request.',
        ),
        method: f.enumOf(HTTP_METHODS, 'HTTP method.').default('GET'),
        headers: z.record(z.string(), f.string('Header value.')).default({}).describe('Request headers.'),
        body: f.string('Request body, for POST/PUT/PATCH.').optional(),
        json: f
          .boolean('Parse the answer as JSON: an array gives one event per element, an object one event.')
          .default(false),
        timeout: f.duration('Time allowed for one request.').default('30s'),
        trigger: triggerSchema(f).optional(),
      },
      'input.http-poll',
    )
    .describe('Polls an HTTP endpoint on its trigger and emits what it answers.');
}
