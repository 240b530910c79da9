/**
 * `GET /api/health`: liveness without authentication, for load balancers and `npm start`.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { createRouter, type RouteFamily } from '../app/router.ts';

const HealthResponse = z.object({ status: z.literal('ok') }).openapi('Health');

export function healthFamily(): RouteFamily {
  const routes = createRouter();
  routes.openapi(
    createRoute({
      method: 'get',
      path: '/health',
      tags: ['health'],
      summary: 'Liveness check (no authentication)',
      responses: {
        200: {
          description: 'The service is up',
          content: { 'application/json': { schema: HealthResponse } },
        },
      },
    }),
    (c) => c.json({ status: 'ok' as const }, 200),
  );
  return { name: 'health', routes };
}
