// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} and ${dyn|..} are literal job text here
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRuntimeValues } from '../../functions/secrets/runtime-values.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { jsonInit } from '../helpers/http.ts';

let t: TestApp;

beforeAll(async () => {
  t = await testApp();
  const admin = bearer(await bootstrapTestAdmin(t));
  await t.request('/api/secrets/db/password', jsonInit('PUT', { value: 'pw-7c1d' }, admin));
  await t.request('/api/variables/REGION', jsonInit('PUT', { value: 'eu' }, admin));
});
afterAll(() => t.close());

describe('run-time values for the cloud worker', () => {
  it('fills in secrets and variables, falls back, and redacts what the run reports', async () => {
    const db = await t.deps.clients.firestore();
    const definition = {
      url: 'https://x.test/${dyn|REGION}/${dyn|TIER||free}',
      headers: { authorization: 'Basic ${secret|db/password}' },
    };
    const r = await resolveRuntimeValues(t.deps, db, 'default', definition);
    if (!r.ok) throw new Error(r.missing.join());
    expect(r.definition).toEqual({
      url: 'https://x.test/eu/free',
      headers: { authorization: 'Basic pw-7c1d' },
    });
    expect(r.redact({ reason: 'sent Basic pw-7c1d' })).toEqual({ reason: 'sent Basic [secret db/password]' });
    expect(definition.headers.authorization).toBe('Basic ${secret|db/password}');
  });

  it('names every missing secret and fallback-less variable', async () => {
    const db = await t.deps.clients.firestore();
    const r = await resolveRuntimeValues(t.deps, db, 'default', ['${secret|db/none}', '${dyn|NOPE}']);
    expect(r).toEqual({ ok: false, missing: ['secret db/none', 'variable NOPE'] });
  });

  it('reads nothing for a job without references', async () => {
    const r = await resolveRuntimeValues(t.deps, await t.deps.clients.firestore(), 'default', { a: 'b' });
    expect(r).toMatchObject({ ok: true, definition: { a: 'b' } });
  });
});
