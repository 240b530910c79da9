/**
 * Assembles route families into one Hono app with the shared edge: request ids
 * and logs, security headers, body rules, the contract's error body, and the OpenAPI document.
 * The local stack mounts every family; a Cloud Function entry point mounts one.
 *
 * @example
 *   const app = createApp(deps, [healthFamily, contextsFamily]);
 *   serve({ fetch: app.fetch, port: 8443 });
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps } from './deps.ts';
import type { AppEnv } from './env.ts';
import { onError, onNotFound } from './errors.ts';
import { apiHeaders } from './middleware/api-headers.ts';
import { limitBodySize, requireBodyMediaType } from './middleware/body-rules.ts';
import { requestContext } from './middleware/request-context.ts';
import type { RouteFamily } from './router.ts';

export type FamilyFactory = (deps: AppDeps) => RouteFamily;

export const API_INFO = {
  title: 'Sluice control plane API',
  version: '1',
  description:
    'Jobs, contexts, workers and credentials of a Sluice control plane. All paths are under /api; ' +
    'most need `Authorization: Bearer <JWT>` (see POST /api/tokens/create/user and /api/tokens/create/api).',
};

export function createApp(deps: AppDeps, factories: FamilyFactory[]): OpenAPIHono<AppEnv> {
  const families = factories.map((factory) => factory(deps));
  const app = new OpenAPIHono<AppEnv>();
  app.use('*', requestContext(deps.logger));
  app.use('/api/*', apiHeaders());
  app.use('/api/*', limitBodySize());
  app.use('/api/*', requireBodyMediaType(families.flatMap((f) => f.bodyMediaTypes ?? [])));
  for (const family of families) app.route('/api', family.routes);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  app.doc31('/api/openapi.json', {
    openapi: '3.1.0',
    info: API_INFO,
    servers: [{ url: '/' }],
  });
  app.onError(onError);
  app.notFound(onNotFound);
  return app;
}
