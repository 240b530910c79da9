/**
 * Every route family builds its routes on `createRouter()`: an OpenAPIHono whose
 * request validation failures become the contract's 400 body with `details`.
 * Declaring a route once (`createRoute` with zod schemas) gives validation,
 * types and the OpenAPI document together.
 *
 * @example
 *   const router = createRouter();
 *   router.openapi(createRoute({ method: 'get', path: '/health', responses: {...} }), (c) => c.json({ status: 'ok' }));
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { ApiError, issuesToDetails } from '../../shared/errors.ts';
import type { AppEnv } from './env.ts';
import { errorResponse } from './errors.ts';

export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const prefix = result.target === 'json' ? [] : [result.target];
      const details = issuesToDetails(result.error.issues, prefix);
      const what = result.target === 'json' ? 'request body' : `request ${result.target}`;
      return errorResponse(
        c,
        ApiError.invalid(`invalid ${what}: ${details[0]?.message ?? 'malformed'}`, details),
      );
    },
  });
}

/** A route family: a factory from dependencies to the routes it serves under `/api`. */
export interface RouteFamily {
  name: string;
  /** Media types accepted on request bodies, by route, beyond `application/json`. */
  bodyMediaTypes?: { method: string; path: RegExp; types: string[] }[];
  routes: OpenAPIHono<AppEnv>;
}
