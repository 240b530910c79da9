/**
 * The `tokens` family: `POST /api/tokens/create/user` (username and password) and
 * `POST /api/tokens/create/api` (an API key or worker key) give a time-bounded JWT.
 * Both are rate limited on failures and never say which part of a credential was wrong.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { TokenResponse as TokenResponseSchema } from '../../shared/api/identity.ts';
import { hashKey, kindOfKey, sameHash } from '../../shared/auth/keys.ts';
import { TenantName } from '../../shared/auth/name-schemas.ts';
import { resolveTtl } from '../../shared/auth/ttl.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import { body, errors, json } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { userClaims } from '../auth/login.ts';
import { clientAddress, FailureLimiter } from '../auth/rate-limit.ts';
import { authServices, type TokenClaims } from '../auth/services.ts';
import { workerCredentialRef } from '../identity/credential-refs.ts';
import type { ApiKeyRecord, WorkerRecord } from '../identity/store.ts';

export const TokenResponse = TokenResponseSchema.openapi('Token');

const Ttl = z
  .string()
  .max(32)
  .optional()
  .openapi({ description: 'Token lifetime, 1m to 24h (default 30m)', example: '30m' });

const UserTokenRequest = z
  .strictObject({
    username: z.string().min(1).max(256),
    password: z.string().min(1).max(1024),
    ttl: Ttl,
    tenant: TenantName.optional(),
  })
  .openapi('UserTokenRequest');

const ApiTokenRequest = z
  .strictObject({ key: z.string().min(1).max(256), ttl: Ttl })
  .openapi('ApiTokenRequest');

export function tokensFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  const limiter = async () => new FailureLimiter(await deps.clients.firestore());

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/tokens/create/user',
      tags: ['tokens'],
      summary: 'Exchange a username and password for a JWT',
      request: body(UserTokenRequest),
      responses: { 201: json(TokenResponse, 'A token'), ...errors(400, 401, 403, 429) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const ttlMs = resolveTtl(input.ttl, {
        defaultTtl: deps.config.defaultTokenTtl,
        maxTtl: deps.config.maxTokenTtl,
      });
      const claims = await userClaims(c, deps, input.username, input.password, input.tenant, await limiter());
      return c.json(await issue(claims, ttlMs), 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/tokens/create/api',
      tags: ['tokens'],
      summary: 'Exchange an API key or worker key for a JWT',
      request: body(ApiTokenRequest),
      responses: { 201: json(TokenResponse, 'A token'), ...errors(400, 401, 429) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const ttlMs = resolveTtl(input.ttl, {
        defaultTtl: deps.config.defaultTokenTtl,
        maxTtl: deps.config.maxTokenTtl,
      });
      const claims = await keyClaims(c, deps, input.key, await limiter());
      return c.json(await issue(claims, ttlMs), 201);
    },
  );

  async function issue(claims: TokenClaims, ttlMs: number) {
    const { token, expiresAt } = await auth.issue(claims, ttlMs);
    return {
      token,
      token_type: 'Bearer' as const,
      expires_at: expiresAt.toISOString(),
      expires_in: Math.round((expiresAt.getTime() - Date.now()) / 1000),
      tenant: claims.tenant,
      roles: claims.roles,
    };
  }

  return { name: 'tokens', routes };
}

async function keyClaims(
  c: Context,
  deps: AppDeps,
  key: string,
  limiter: FailureLimiter,
): Promise<TokenClaims> {
  const hash = hashKey(key);
  const scopes = [`key:${hash.slice(0, 16)}`, `ip:${clientAddress(c, deps.config.trustedProxyHops)}`];
  const attempt = await limiter.begin(scopes);
  const store = await authServices(deps).store();
  const kind = kindOfKey(key);
  const entry = kind === 'api-key' || kind === 'worker' ? await store.lookupKey(hash) : undefined;
  if (entry?.kind === 'api-key') {
    const record = (await store.apiKey(entry.tenant, entry.id).get()).data() as ApiKeyRecord | undefined;
    if (
      record &&
      sameHash(record.key_hash, hash) &&
      (!record.expires_at || Date.parse(record.expires_at) > Date.now())
    ) {
      await attempt.succeeded();
      return {
        sub: record.id,
        kind: 'api-key',
        tenant: entry.tenant,
        roles: [record.role],
        cred: `api-key:${entry.tenant}:${record.id}`,
      };
    }
  }
  if (entry?.kind === 'worker') {
    const record = (await store.worker(entry.tenant, entry.id).get()).data() as WorkerRecord | undefined;
    if (record && sameHash(record.key_hash, hash)) {
      await attempt.succeeded();
      return {
        sub: record.id,
        kind: 'worker',
        tenant: entry.tenant,
        roles: ['worker'],
        cred: workerCredentialRef(entry.tenant, record),
      };
    }
  }
  throw ApiError.unauthenticated(
    'the key is not valid (enrollment secrets are exchanged at POST /api/workers/enroll)',
  );
}
