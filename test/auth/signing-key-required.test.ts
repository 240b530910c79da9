/**
 * In the cloud every function that signs or checks tokens gets the signing key from Secret
 * Manager (SLUICE_SIGNING_KEY). One deployed without it made a key of its own in Firestore,
 * silently: its tokens did not verify elsewhere, and the key sat where every identity that
 * reads Firestore could read it (the runners that run tenants' parsers among them). A Cloud
 * Function (K_SERVICE set) now refuses to start without it, and writes nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rootCollection } from '../../functions/adapters/firestore-paths.ts';
import { loadSigningKeys } from '../../functions/auth/signing-keys.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

it('a Cloud Function without SLUICE_SIGNING_KEY refuses to make a key in Firestore', async () => {
  await expect(loadSigningKeys(t.deps, { K_SERVICE: 'api-auth' })).rejects.toThrow(
    /^SLUICE_SIGNING_KEY is not set for api-auth: terraform mounts it from Secret Manager/,
  );
  const db = await t.deps.clients.firestore();
  expect((await rootCollection(db, 'system').doc('signing-keys').get()).exists).toBe(false);
});

it('outside the cloud (tests, a stack without a key file) the key is still made in Firestore', async () => {
  const keys = await loadSigningKeys(t.deps, {});
  expect(keys.jwks.keys).toHaveLength(1);
});
