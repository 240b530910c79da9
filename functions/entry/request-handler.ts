/**
 * The one Functions Framework adapter of every HTTP function: a Hono app's `fetch` as a
 * Node request handler. Kept apart from http-function.ts so that a function that mounts
 * no route family (document-function.ts) does not load `createApp` and its schemas.
 *
 * @example
 *   export const handler = handlerFor(app);
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';

export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export function handlerFor(app: { fetch: (request: Request) => Response | Promise<Response> }): HttpHandler {
  const listener = getRequestListener(app.fetch);
  return async (req, res) => {
    await listener(req, res);
  };
}
