/**
 * Real credentials for tests: the bootstrap admin, and users, API keys and workers
 * created through the API itself, exchanged for real tokens.
 *
 * @example
 *   const admin = await bootstrapTestAdmin(t);
 *   const viewer = await tokenFor(t, { role: 'viewer' });
 */
import { randomUUID } from 'node:crypto';
import { bootstrapAdmin } from '../../functions/identity/bootstrap.ts';
import type { Role } from '../../shared/auth/principal.ts';
import type { TestApp } from './app.ts';
import { json, jsonInit } from './http.ts';

export const ADMIN_PASSWORD = 'correct-horse-battery-staple';
const admins = new WeakMap<TestApp, Promise<string>>();

export function bootstrapTestAdmin(t: TestApp): Promise<string> {
  let token = admins.get(t);
  if (!token) {
    token = (async () => {
      await bootstrapAdmin(t.deps, { password: ADMIN_PASSWORD });
      return await userToken(t, 'admin', ADMIN_PASSWORD);
    })();
    admins.set(t, token);
  }
  return token;
}

export async function userToken(
  t: TestApp,
  username: string,
  password: string,
  extra: Record<string, unknown> = {},
) {
  const res = await t.request('/api/tokens/create/user', jsonInit('POST', { username, password, ...extra }));
  if (res.status !== 201) throw new Error(`token for ${username}: ${res.status} ${await res.text()}`);
  return (await json(res)).token as string;
}

export async function apiKeyToken(t: TestApp, key: string) {
  const res = await t.request('/api/tokens/create/api', jsonInit('POST', { key }));
  if (res.status !== 201) throw new Error(`token for key: ${res.status} ${await res.text()}`);
  return (await json(res)).token as string;
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A token of the given role and kind in a tenant (default `default`), backed by a real credential. */
export async function tokenFor(
  t: TestApp,
  opts: { role: Role; tenant?: string; kind?: 'user' | 'api-key' | 'worker'; subject?: string },
): Promise<string> {
  const admin = await bootstrapTestAdmin(t);
  const tenant = opts.tenant ?? 'default';
  if (tenant !== 'default') {
    const res = await t.request('/api/tenants', jsonInit('POST', { name: tenant }, bearer(admin)));
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`tenant: ${res.status} ${await res.text()}`);
  }
  const kind = opts.role === 'worker' ? 'worker' : (opts.kind ?? 'user');
  const subject = opts.subject ?? `${kind}-${randomUUID().slice(0, 8)}`;
  if (kind === 'worker') {
    const res = await t.request(
      '/api/workers',
      jsonInit('POST', { id: subject }, bearer(await tenantAdmin(t, tenant))),
    );
    if (res.status !== 201) throw new Error(`worker: ${res.status} ${await res.text()}`);
    return await apiKeyToken(t, (await json(res)).key);
  }
  if (kind === 'api-key') {
    const res = await t.request(
      '/api/api-keys',
      jsonInit('POST', { name: subject, role: opts.role }, bearer(await tenantAdmin(t, tenant))),
    );
    if (res.status !== 201) throw new Error(`api key: ${res.status} ${await res.text()}`);
    return await apiKeyToken(t, (await json(res)).key);
  }
  const password = `pw-${randomUUID()}`;
  const res = await t.request(
    '/api/users',
    jsonInit('POST', { username: subject, password, role: opts.role, tenant }, bearer(admin)),
  );
  if (res.status !== 201) throw new Error(`user: ${res.status} ${await res.text()}`);
  return await userToken(t, subject, password, { tenant });
}

async function tenantAdmin(t: TestApp, tenant: string): Promise<string> {
  if (tenant === 'default') return await bootstrapTestAdmin(t);
  return await userToken(t, 'admin', ADMIN_PASSWORD, { tenant });
}
