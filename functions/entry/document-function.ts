/**
 * A Cloud Function that serves one JSON document written next to its bundle by
 * `npm run build`: the OpenAPI document of the whole API (`/api/openapi.json`). Building
 * the document when the function starts meant loading every route family and all their
 * schemas, the slowest cold start of all the functions (up to 0.43 x the SDK baseline of
 * `npm run bench:coldstart`, against about 0.2 x for the others). The document is the
 * same one the local stack generates from the route declarations: scripts/build.ts asks
 * `createApp` with every family for it. The shared edge stays: request ids, access logs and
 * the contract's error body for anything else.
 *
 * @example
 *   // functions/entry/openapi.ts (generated)
 *   export const handler = documentFunction(import.meta.url, 'openapi.json', '/api/openapi.json');
 */
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import type { AppEnv } from '../app/env.ts';
import { onError, onNotFound } from '../app/errors.ts';
import { createLogger } from '../app/logger.ts';
import { requestContext } from '../app/middleware/request-context.ts';
import { type HttpHandler, handlerFor } from './request-handler.ts';

/** Serves `file`, found next to the module at `moduleUrl`, at GET `path`. */
export function documentFunction(moduleUrl: string, file: string, path: string): HttpHandler {
  const body = readFileSync(new URL(file, moduleUrl), 'utf8');
  const app = new Hono<AppEnv>();
  app.use('*', requestContext(createLogger()));
  app.get(path, (c) => c.body(body, 200, { 'content-type': 'application/json; charset=UTF-8' }));
  app.onError(onError);
  app.notFound(onNotFound);
  return handlerFor(app);
}
