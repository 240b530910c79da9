/**
 * Gives each request an id (from `X-Request-Id` when a proxy set a sane one) and
 * a child logger, and writes one access-log line per request (at debug when it went well
 * and fast, info when it failed or was slow, error on a 5xx). The query string is
 * never logged: it is the one place a streaming token may legitimately appear.
 */
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import type { Logger } from '../logger.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;
/** A request slower than this is logged at info, whatever its status (long polls excepted). */
const SLOW_MS = 2_000;
const LONG_POLLS = new Set(['/api/worker/messages', '/api/worker/stream']);

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
    const ms = performance.now() - started;
    // Heartbeats, long polls and every other request that went well are debug: the lines
    // people need (failures, slow answers, job output) must not scroll away behind them.
    const slow = ms >= SLOW_MS && !LONG_POLLS.has(c.req.path);
    const level = c.res.status >= 500 ? 'error' : c.res.status >= 400 || slow ? 'info' : 'debug';
    requestLogger[level](
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(ms * 10) / 10,
        ...(principal ? { subject: principal.subject, tenant: principal.tenant } : {}),
      },
      'request',
    );
  };
}
