/**
 * The auth middleware every route family uses. `authenticate(deps)` verifies the
 * bearer JWT (or, for the web UI, the session cookie with its CSRF header) and sets
 * the principal; `requireRole(role)` answers 403 to an identity without it.
 *
 * @example
 *   routes.use('/contexts/*', authenticate(deps), requireRole('admin'));
 */
import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Role } from '../../shared/auth/principal.ts';
import { allows } from '../../shared/auth/roles.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { authServices } from './services.ts';

export const SESSION_COOKIE = 'sluice_session';
export const CSRF_COOKIE = 'sluice_csrf';
const TOKEN_PARAMS = ['access_token', 'token', 'jwt', 'bearer'];
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function authenticate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const auth = authServices(deps);
  return async function authenticateMiddleware(c, next) {
    const url = new URL(c.req.url);
    const queryToken = TOKEN_PARAMS.find((p) => url.searchParams.has(p));
    let token: string | undefined;
    // No exception, not even for the worker stream: it opens with a single-use ticket
    // (functions/worker-api/stream-tickets.ts), since URLs land in request logs.
    if (queryToken) {
      throw ApiError.unauthenticated(
        'tokens are not accepted in the URL; send the header Authorization: Bearer <token>',
      );
    }
    const header = c.req.header('authorization');
    if (header !== undefined) {
      const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/.exec(header.trim());
      if (!match) throw ApiError.unauthenticated('the Authorization header must be `Bearer <JWT>`');
      token = match[1];
    }
    if (token) {
      const { csrf: _, ...principal } = await auth.verify(token);
      if (principal.credentialRef.startsWith('session:'))
        throw ApiError.unauthenticated('session tokens only work as a cookie');
      c.set('principal', principal);
      return await next();
    }
    const session = getCookie(c, SESSION_COOKIE);
    if (!session) throw ApiError.unauthenticated();
    const { csrf, ...principal } = await auth.verify(session);
    if (!SAFE_METHODS.has(c.req.method)) {
      const sent = c.req.header('x-csrf-token');
      if (!csrf || !sent || !constantTimeEqual(sent, csrf)) {
        throw ApiError.forbidden(
          'a request authenticated by the session cookie must carry the X-CSRF-Token header',
        );
      }
    }
    c.set('principal', principal);
    await next();
  };
}

export function requireRole(role: Role): MiddlewareHandler<AppEnv> {
  return async function requireRoleMiddleware(c, next) {
    const principal = c.get('principal');
    if (!principal) throw ApiError.unauthenticated();
    if (!allows(principal.roles, role)) {
      throw ApiError.forbidden(
        principal.roles.includes('worker')
          ? 'worker tokens may only call /api/worker/...'
          : `this needs the ${role} role in tenant ${principal.tenant}; you have ${principal.roles.join(', ')}`,
      );
    }
    await next();
  };
}

export function requireSystemAdmin(): MiddlewareHandler<AppEnv> {
  return async function requireSystemAdminMiddleware(c, next) {
    if (!c.get('principal')?.systemAdmin) throw ApiError.forbidden('only the system admin may do this');
    await next();
  };
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
