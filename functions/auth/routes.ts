/**
 * The `auth` family: who am I (`GET /api/auth/me`), the public keys that verify our
 * tokens (`GET /api/auth/jwks.json`), and browser sessions for the web UI
 * (`POST /api/auth/login`, `POST /api/auth/logout`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { deleteCookie, setCookie } from 'hono/cookie';
import { Identity } from '../../shared/api/identity.ts';
import { TenantName } from '../../shared/auth/name-schemas.ts';
import { resolveTtl } from '../../shared/auth/ttl.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { userClaims } from '../auth/login.ts';
import { sessionCredentialRef, sessionIdOf } from '../identity/credential-refs.ts';
import { authenticate, CSRF_COOKIE, SESSION_COOKIE } from './middleware.ts';
import { FailureLimiter } from './rate-limit.ts';
import { authServices } from './services.ts';

const Me = Identity.openapi('Identity');

const LoginRequest = z
  .strictObject({
    username: z.string().min(1).max(256),
    password: z.string().min(1).max(1024),
    tenant: TenantName.optional(),
    ttl: z.string().max(32).optional(),
  })
  .openapi('LoginRequest');

export function authFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  routes.use('/auth/me', authenticate(deps));
  routes.use('/auth/logout', authenticate(deps));

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/auth/me',
      tags: ['auth'],
      summary: 'The authenticated identity',
      security: BEARER,
      responses: { 200: json(Me, 'The caller'), ...errors(401) },
    }),
    (c) => {
      const p = c.get('principal');
      return c.json(
        {
          subject: p.subject,
          kind: p.kind,
          tenant: p.tenant,
          roles: p.roles,
          issued_at: p.issuedAt.toISOString(),
          expires_at: p.expiresAt.toISOString(),
        },
        200,
      );
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/auth/jwks.json',
      tags: ['auth'],
      summary: 'Public keys that verify Sluice tokens (no authentication)',
      responses: {
        200: json(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }), 'JSON Web Key Set'),
      },
    }),
    async (c) => c.json(await auth.jwks(), 200, { 'cache-control': 'public, max-age=300' }),
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/auth/login',
      tags: ['auth'],
      summary: 'Start a browser session: sets an HttpOnly session cookie and a readable CSRF cookie',
      request: body(LoginRequest),
      responses: { 204: noContent('Signed in'), ...errors(400, 401, 403, 429) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const ttlMs = resolveTtl(input.ttl, {
        defaultTtl: deps.config.defaultTokenTtl,
        maxTtl: deps.config.maxTokenTtl,
      });
      const db = await deps.clients.firestore();
      const claims = await userClaims(
        c,
        deps,
        input.username,
        input.password,
        input.tenant,
        new FailureLimiter(db),
      );
      const csrf = randomBytes(24).toString('base64url');
      const session = (await auth.store()).session(randomUUID());
      const { token, expiresAt } = await auth.issue(
        { ...claims, cred: sessionCredentialRef(claims.cred, session.id), csrf },
        ttlMs,
      );
      await session.set({ username: claims.sub, tenant: claims.tenant, expires_at: expiresAt });
      const cookie = { path: '/', secure: true, sameSite: 'Strict' as const, expires: expiresAt };
      setCookie(c, SESSION_COOKIE, token, { ...cookie, httpOnly: true });
      setCookie(c, CSRF_COOKIE, csrf, cookie);
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/auth/logout',
      tags: ['auth'],
      summary: 'End the browser session',
      responses: { 204: noContent('Signed out'), ...errors(401, 403) },
    }),
    async (c) => {
      const ref = c.get('principal').credentialRef;
      const sessionId = sessionIdOf(ref);
      if (sessionId) {
        await (await auth.store()).session(sessionId).delete();
        auth.forget(ref);
      }
      deleteCookie(c, SESSION_COOKIE, { path: '/', secure: true });
      deleteCookie(c, CSRF_COOKIE, { path: '/', secure: true });
      return c.body(null, 204);
    },
  );

  return { name: 'auth', routes };
}
