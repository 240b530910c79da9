/**
 * Pieces every route declaration shares: the contract's error body and the error
 * answers a route can give, so each route lists them in one line.
 *
 * @example
 *   responses: { 200: json(Me, 'The caller'), ...errors(401, 403) }
 */
import { z } from '@hono/zod-openapi';

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'invalid_request' }),
      message: z.string(),
      details: z
        .array(
          z.object({
            path: z.string(),
            message: z.string(),
            line: z.number().int().optional(),
            column: z.number().int().optional(),
          }),
        )
        .optional(),
    }),
  })
  .openapi('Error');

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (see details)',
  401: 'Missing, invalid or expired token',
  403: 'The identity lacks the role or tenant',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Body over 1 MiB',
  415: 'Unsupported Content-Type',
  429: 'Too many failed attempts',
  503: 'A backing service is unavailable',
};

export function errors(...codes: number[]) {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      { description: DESCRIPTIONS[code] ?? 'Error', content: { 'application/json': { schema: ErrorBody } } },
    ]),
  );
}

export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** A list route's 200: the JSON array, and the header that leads to the next page (app/paging.ts). */
export function jsonPage<T extends z.ZodType>(schema: T, description: string) {
  return {
    description,
    headers: {
      'X-Next-Page-Token': {
        description: 'Present when more items follow: pass it as page_token to get the next page.',
        schema: { type: 'string' as const },
      },
    },
    content: { 'application/json': { schema } },
  };
}

export function body<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { 'application/json': { schema } } } };
}

export const BEARER = [{ bearer: [] }];

export const noContent = (description: string) => ({ description });
