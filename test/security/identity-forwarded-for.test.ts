/**
 * Issue 16, item 6: X-Forwarded-For must not reset the per-address limit of failed logins.
 * The local stack has no proxy in front and ignores the header; behind Google's load
 * balancer (`SLUICE_TRUSTED_PROXY_HOPS=1`) only the address the balancer appended counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../functions/app/config.ts';
import { createApp } from '../../functions/app/create-app.ts';
import { MAX_FAILURES_PER_MINUTE } from '../../functions/auth/rate-limit.ts';
import { ALL_FAMILIES } from '../../functions/families.ts';
import { serveTestApp, type TestApp, testApp, testDeps } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';

/** Logins with a wrong password, each as another user so only the address limit can bite. */
async function failedLogin(url: string, i: number, forwardedFor: string): Promise<number> {
  const res = await fetch(`${url}/api/tokens/create/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ username: `guess-${i}`, password: 'not-the-password' }),
  });
  await res.body?.cancel();
  return res.status;
}

describe('the failed-login limit per address', () => {
  let t: TestApp;
  let server: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    t = await testApp();
    await bootstrapTestAdmin(t);
    server = await serveTestApp(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('ignores X-Forwarded-For with no proxy in front (the local stack)', async () => {
    for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) {
      expect(await failedLogin(server.url, i, `198.51.100.${i}`)).toBe(401);
    }
    expect(await failedLogin(server.url, 99, '198.51.100.200')).toBe(429);
  });

  it('counts only the address the load balancer appended when one proxy hop is trusted', async () => {
    const { deps } = testDeps();
    const behindBalancer = { ...deps, config: { ...deps.config, trustedProxyHops: 1 } };
    const app = createApp(behindBalancer, ALL_FAMILIES);
    const own = { deps: behindBalancer, app, request: app.request } as unknown as TestApp;
    const lb = await serveTestApp(own);
    try {
      // The attacker forges the first entries; Google's front end appends `<client>, <balancer>`.
      for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) {
        expect(await failedLogin(lb.url, i, `10.9.8.${i}, 203.0.113.7, 130.211.0.1`)).toBe(401);
      }
      expect(await failedLogin(lb.url, 99, '10.9.8.200, 203.0.113.7, 130.211.0.1')).toBe(429);
      expect(await failedLogin(lb.url, 100, '203.0.113.8, 130.211.0.1')).toBe(401);
    } finally {
      await lb.close();
      await deps.clients.close();
    }
  });

  it('reads the number of trusted hops from SLUICE_TRUSTED_PROXY_HOPS, none by default', () => {
    expect(loadConfig({}).trustedProxyHops).toBe(0);
    expect(loadConfig({ SLUICE_TRUSTED_PROXY_HOPS: '1' }).trustedProxyHops).toBe(1);
    expect(() => loadConfig({ SLUICE_TRUSTED_PROXY_HOPS: 'one' })).toThrow(/SLUICE_TRUSTED_PROXY_HOPS/);
  });
});

describe('check:deploy', () => {
  it('fails when terraform does not set SLUICE_TRUSTED_PROXY_HOPS for the API functions', async () => {
    const { checkProxyHops, loadTerraform } = await import('../../scripts/check-deploy.ts');
    const tf = await loadTerraform();
    expect(checkProxyHops(tf)).toMatchObject({ ok: true, problems: [] });
    delete tf.locals.common_env.SLUICE_TRUSTED_PROXY_HOPS;
    expect(checkProxyHops(tf).problems).toEqual([
      'local.common_env in terraform/functions.tf lacks SLUICE_TRUSTED_PROXY_HOPS',
    ]);
  });
});
