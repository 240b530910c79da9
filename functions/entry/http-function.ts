/**
 * Turns route families into one Cloud Functions (2nd gen) HTTP handler. The app is
 * built when the module loads (the Functions Framework loads it before the first
 * request), the Google clients only on first use. The Functions Framework hands us an
 * Express request whose body it has already read into `req.rawBody`;
 * `getRequestListener` reads `rawBody` when present, so bodies reach Hono intact.
 *
 * @example
 *   // functions/entry/tokens.ts
 *   export const handler = httpFunction([tokensFamily]);
 */
import { cloudClients } from '../adapters/clients.ts';
import { loadConfig } from '../app/config.ts';
import { createApp, type FamilyFactory } from '../app/create-app.ts';
import type { AppDeps } from '../app/deps.ts';
import { createLogger } from '../app/logger.ts';
import { type HttpHandler, handlerFor } from './request-handler.ts';

export type { HttpHandler } from './request-handler.ts';

/** What every entry point shares: configuration from the environment, lazy clients, JSON logs. */
export function cloudDeps(env: NodeJS.ProcessEnv = process.env): AppDeps {
  const config = loadConfig(env);
  return { config, clients: cloudClients({ projectId: config.projectId }), logger: createLogger() };
}

export function httpFunction(factories: FamilyFactory[], deps: AppDeps = cloudDeps()): HttpHandler {
  return handlerFor(createApp(deps, factories));
}
