/**
 * Gives each request an id (from `X-Request-Id` when a proxy set a sane one) and
 * a child logger, and writes one access-log line per request. The query string is
 * never logged: it is the one place a streaming token may legitimately appear.
 */
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import type { Logger } from '../logger.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

export function requestContext(logger: Logger): MiddlewareHandler<AppEnv> {
  return async function requestContextMiddleware(c, next) {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const requestLogger = logger.child({ requestId });
    c.set('requestId', requestId);
    c.set('logger', requestLogger);
    const started = performance.now();
    await next();
    c.header('X-Request-Id', requestId);
    const principal = c.get('principal');
    requestLogger.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(principal ? { subject: principal.subject, tenant: principal.tenant } : {}),
      },
      'request',
    );
  };
}
