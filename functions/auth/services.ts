/**
 * The identity services of one app instance: signing keys, token issue and
 * verification, and the short credential cache that makes revocation take effect
 * within 5 seconds without a Firestore read on every request.
 *
 * @example
 *   const auth = authServices(deps);
 *   const { token } = await auth.issue({ sub: 'admin', kind: 'user', tenant: 'default', roles: ['admin'], cred }, 30 * 60_000);
 *   const principal = await auth.verify(token);
 */
import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { isPrototypeName } from '../../shared/auth/names.ts';
import type { Principal, PrincipalKind, Role } from '../../shared/auth/principal.ts';
import { ApiError } from '../../shared/errors.ts';
import { own } from '../../shared/own.ts';
import type { AppDeps } from '../app/deps.ts';
import { userStamp, workerStamp } from '../identity/credential-refs.ts';
import { type ApiKeyRecord, IdentityStore, type UserRecord, type WorkerRecord } from '../identity/store.ts';
import { ALGORITHM, loadSigningKeys, type SigningKeys } from './signing-keys.ts';

/** How long a credential's validity is cached; revocation must bite within 5 s. */
export const CREDENTIAL_CACHE_MS = 4_000;
/** Signing keys are re-read at this pace so a rotation reaches every instance. */
const KEYS_REFRESH_MS = 60_000;

export interface TokenClaims {
  sub: string;
  kind: PrincipalKind;
  tenant: string;
  roles: Role[];
  /** Credential reference, see functions/identity/credential-refs.ts. */
  cred: string;
  sys?: boolean;
  /** Browser sessions only: the CSRF value the `X-CSRF-Token` header must repeat. */
  csrf?: string;
}

export interface AuthServices {
  store(): Promise<IdentityStore>;
  jwks(): Promise<SigningKeys['jwks']>;
  issue(claims: TokenClaims, ttlMs: number): Promise<{ token: string; expiresAt: Date; jti: string }>;
  /** Verifies signature, algorithm, issuer, audience, times, and that the credential still stands. */
  verify(token: string): Promise<Principal & { csrf?: string }>;
  /** Forgets cached state of a credential (a ref or its prefix, e.g. `user:alice`) right after revoking it here. */
  forget(cred: string): void;
}

const INSTANCES = new WeakMap<AppDeps, AuthServices>();

export function authServices(deps: AppDeps): AuthServices {
  let services = INSTANCES.get(deps);
  if (!services) {
    services = createAuthServices(deps);
    INSTANCES.set(deps, services);
  }
  return services;
}

function createAuthServices(deps: AppDeps): AuthServices {
  let keys: { value: Promise<SigningKeys>; at: number } | undefined;
  let verifier: { keys: Promise<SigningKeys>; jwks: ReturnType<typeof createLocalJWKSet> } | undefined;
  const credentials = new Map<string, { valid: boolean; at: number }>();
  let store: Promise<IdentityStore> | undefined;

  const getStore = () => {
    store ??= deps.clients.firestore().then((db) => new IdentityStore(db));
    return store;
  };
  const getKeys = () => {
    if (!keys || Date.now() - keys.at > KEYS_REFRESH_MS) {
      const value = loadSigningKeys(deps);
      value.catch(() => {
        if (keys?.value === value) keys = undefined;
      });
      keys = { value, at: Date.now() };
    }
    return keys.value;
  };
  const getVerifier = async () => {
    const current = getKeys();
    if (verifier?.keys !== current)
      verifier = { keys: current, jwks: createLocalJWKSet((await current).jwks) };
    return verifier.jwks;
  };

  async function credentialValid(claims: TokenClaims): Promise<boolean> {
    // Every claim checkCredential reads: a token claiming more on the same credential
    // (`sys`, another `sub` or `kind`) must not ride on the genuine one's cached answer.
    const cacheKey = `${claims.cred}|${JSON.stringify([claims.tenant, claims.roles, claims.sub, claims.kind, claims.sys === true])}`;
    const cached = credentials.get(cacheKey);
    if (cached && Date.now() - cached.at < CREDENTIAL_CACHE_MS) return cached.valid;
    const valid = await checkCredential(await getStore(), claims);
    if (credentials.size > 10_000) credentials.clear();
    credentials.set(cacheKey, { valid, at: Date.now() });
    return valid;
  }

  return {
    store: getStore,
    jwks: async () => (await getKeys()).jwks,
    async issue(claims, ttlMs) {
      const { current } = await getKeys();
      const now = Math.floor(Date.now() / 1000);
      const exp = now + Math.floor(ttlMs / 1000);
      const jti = randomUUID();
      const token = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: ALGORITHM, kid: current.kid, typ: 'JWT' })
        .setIssuer(deps.config.tokenIssuer)
        .setAudience(deps.config.tokenAudience)
        .setSubject(claims.sub)
        .setIssuedAt(now)
        .setNotBefore(now)
        .setExpirationTime(exp)
        .setJti(jti)
        .sign(current.key);
      return { token, expiresAt: new Date(exp * 1000), jti };
    },
    async verify(token) {
      let payload: JWTPayload & Partial<TokenClaims>;
      try {
        ({ payload } = await jwtVerify(token, await getVerifier(), {
          algorithms: [ALGORITHM],
          issuer: deps.config.tokenIssuer,
          audience: deps.config.tokenAudience,
          requiredClaims: ['sub', 'iat', 'nbf', 'exp', 'jti', 'kind', 'tenant', 'roles', 'cred'],
        }));
      } catch (err) {
        if (err instanceof ApiError) throw err;
        const code = (err as { code?: string }).code;
        throw ApiError.unauthenticated(
          code === 'ERR_JWT_EXPIRED' ? 'the token has expired' : 'the token is not valid',
        );
      }
      const claims = payload as JWTPayload & TokenClaims;
      if (!Array.isArray(claims.roles) || !(await credentialValid(claims))) {
        throw ApiError.unauthenticated('the credential behind this token was revoked');
      }
      return {
        subject: claims.sub,
        kind: claims.kind,
        tenant: claims.tenant,
        roles: claims.roles,
        systemAdmin: claims.sys === true,
        credentialRef: claims.cred,
        tokenId: claims.jti!,
        issuedAt: new Date(claims.iat! * 1000),
        expiresAt: new Date(claims.exp! * 1000),
        ...(claims.csrf ? { csrf: claims.csrf } : {}),
      };
    },
    forget(cred) {
      for (const key of credentials.keys()) {
        if (key.startsWith(`${cred}|`) || key.startsWith(`${cred}:`)) credentials.delete(key);
      }
    },
  };
}

export async function checkCredential(store: IdentityStore, claims: TokenClaims): Promise<boolean> {
  if (
    typeof claims.tenant !== 'string' ||
    isPrototypeName(claims.tenant) ||
    !Array.isArray(claims.roles) ||
    claims.roles.length !== 1
  )
    return false;
  const parts = claims.cred.split(':');
  // A token's kind is its credential's: a key or a worker is never a user, nor one another.
  if (claims.kind !== (parts[0] === 'session' ? 'user' : parts[0])) return false;
  if (parts[0] === 'user' && parts.length === 3) {
    const user = await store.getUser(parts[1]!);
    return !!user && parts[1] === claims.sub && userStamp(user) === parts[2] && actsAsUser(user, claims);
  }
  if (parts[0] === 'api-key' && parts.length === 3) {
    const key = (await store.apiKey(parts[1]!, parts[2]!).get()).data() as ApiKeyRecord | undefined;
    return (
      !!key &&
      (!key.expires_at || Date.parse(key.expires_at) > Date.now()) &&
      parts[1] === claims.tenant &&
      parts[2] === claims.sub &&
      key.role === claims.roles[0]
    );
  }
  if (parts[0] === 'worker' && parts.length === 4) {
    const worker = (await store.worker(parts[1]!, parts[2]!).get()).data() as WorkerRecord | undefined;
    return (
      !!worker &&
      workerStamp(worker) === parts[3] &&
      parts[1] === claims.tenant &&
      parts[2] === claims.sub &&
      claims.roles[0] === 'worker'
    );
  }
  if (parts[0] === 'session' && parts.length === 4) {
    const [, username, stamp, sessionId] = parts;
    const [user, session] = await Promise.all([store.getUser(username!), store.session(sessionId!).get()]);
    return (
      !!user &&
      username === claims.sub &&
      userStamp(user) === stamp &&
      session.get('username') === username &&
      session.get('tenant') === claims.tenant &&
      actsAsUser(user, claims)
    );
  }
  return false;
}

/**
 * A user token (or session) stands only while the user still holds the role it claims
 * in its tenant, looked up as an own property: `memberships['constructor']` is not a role.
 * The system admin acts as `admin` in tenants it is not a member of.
 */
function actsAsUser(user: UserRecord, claims: TokenClaims): boolean {
  if ((claims.sys === true) !== (user.system_admin === true)) return false;
  const role = own(user.memberships, claims.tenant);
  return role !== undefined ? role === claims.roles[0] : user.system_admin && claims.roles[0] === 'admin';
}
