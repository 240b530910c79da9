import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../functions/app/create-app.ts';
import { rotateSigningKey } from '../../functions/auth/signing-keys.ts';
import { ALL_FAMILIES } from '../../functions/families.ts';
import { type TestApp, testApp, testDeps } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bearer, bootstrapTestAdmin, userToken } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const kidOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;

describe('signing key rotation', () => {
  it('signs new tokens with the new key and keeps tokens of the previous key valid', async () => {
    const before = await bootstrapTestAdmin(t);
    const newKid = await rotateSigningKey(t.deps);
    expect(newKid).not.toBe(kidOf(before));

    // A fresh instance (as after a deploy) reads the rotated keys from Firestore.
    const { deps } = testDeps(t.projectId);
    const app = createApp(deps, ALL_FAMILIES);
    const request = (path: string, init?: RequestInit) => app.request(path, init);
    const jwks = await json(await request('/api/auth/jwks.json'));
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid, kidOf(before)]);
    expect(JSON.stringify(jwks)).not.toContain('"d"');

    const after = await userToken({ ...t, request } as TestApp, 'admin', ADMIN_PASSWORD);
    expect(kidOf(after)).toBe(newKid);
    for (const token of [before, after])
      expect((await request('/api/auth/me', { headers: bearer(token) })).status).toBe(200);
    await deps.clients.close();
  });
});
