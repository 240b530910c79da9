import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

async function privateJwk(alg: 'ES256' | 'RS256' | 'EdDSA', kid: string) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg };
}

let t: TestApp;
let previousEc: Awaited<ReturnType<typeof privateJwk>>;
beforeAll(async () => {
  const current = await privateJwk('ES256', 'current');
  previousEc = await privateJwk('ES256', 'previous-ec');
  // What an operator might paste into sluice-previous-signing-keys: whole private JWKs.
  const previous = [
    previousEc,
    await privateJwk('RS256', 'previous-rsa'),
    await privateJwk('EdDSA', 'previous-okp'),
  ];
  vi.stubEnv('SLUICE_SIGNING_KEY', JSON.stringify({ ...current, p: 'pasted-by-mistake' }));
  vi.stubEnv('SLUICE_PREVIOUS_SIGNING_KEYS', JSON.stringify(previous));
  t = await testApp();
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await t.close();
});

describe('the published JWKS', () => {
  it('carries only public members, whatever private JWKs the configuration holds', async () => {
    const res = await t.request('/api/auth/jwks.json');
    expect(res.status).toBe(200);
    const { keys } = await json(res);
    expect(keys.map((k: { kid: string }) => k.kid)).toEqual([
      'current',
      'previous-ec',
      'previous-rsa',
      'previous-okp',
    ]);
    for (const key of keys) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    const byKid = Object.fromEntries(keys.map((k: { kid: string }) => [k.kid, k]));
    expect(Object.keys(byKid['previous-ec']).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(Object.keys(byKid['previous-rsa']).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(Object.keys(byKid['previous-okp']).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
  });

  it('still verifies tokens signed by a previous key', async () => {
    const admin = await bootstrapTestAdmin(t);
    const claims = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString());
    const { importJWK } = await import('jose');
    const old = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'previous-ec', typ: 'JWT' })
      .sign(await importJWK(previousEc, 'ES256'));
    expect((await t.request('/api/auth/me', { headers: bearer(old) })).status).toBe(200);
  });
});
