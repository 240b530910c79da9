/**
 * Helpers for the identity attack tests: users made through the API, browser sessions
 * started through `POST /api/auth/login`, and the stored user record to prove that a
 * refused request changed nothing.
 */
import type { UserRecord } from '../../functions/identity/store.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

export async function createUser(
  t: TestApp,
  by: string,
  user: { username: string; password?: string; role: string; tenant?: string },
): Promise<void> {
  const res = await t.request('/api/users', jsonInit('POST', user, bearer(by)));
  if (res.status !== 201) throw new Error(`user ${user.username}: ${res.status} ${await res.text()}`);
}

export async function createTenant(t: TestApp, systemAdmin: string, name: string): Promise<void> {
  const res = await t.request('/api/tenants', jsonInit('POST', { name }, bearer(systemAdmin)));
  if (res.status !== 201 && res.status !== 409) throw new Error(`tenant ${name}: ${res.status}`);
}

export async function storedUser(t: TestApp, username: string): Promise<UserRecord | undefined> {
  const db = await t.deps.clients.firestore();
  return (await db.collection('users').doc(username).get()).data() as UserRecord | undefined;
}

/** Status of a password login (201 when the password works). */
export async function loginStatus(t: TestApp, username: string, password: string, tenant?: string) {
  const res = await t.request(
    '/api/tokens/create/user',
    jsonInit('POST', { username, password, ...(tenant ? { tenant } : {}) }),
  );
  return res.status;
}

export interface Session {
  cookie: string;
  csrf: string;
}

/** A browser session of the web UI: the cookies `POST /api/auth/login` set. */
export async function startSession(
  t: TestApp,
  username: string,
  password: string,
  tenant?: string,
): Promise<Session> {
  const res = await t.request(
    '/api/auth/login',
    jsonInit('POST', { username, password, ...(tenant ? { tenant } : {}) }),
  );
  if (res.status !== 204)
    throw new Error(`login ${username}: ${res.status} ${JSON.stringify(await json(res))}`);
  const cookies = Object.fromEntries(
    res.headers.getSetCookie().map((line) => {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      return [pair!.slice(0, at), pair!.slice(at + 1)];
    }),
  );
  return {
    cookie: `sluice_session=${cookies.sluice_session}; sluice_csrf=${cookies.sluice_csrf}`,
    csrf: cookies.sluice_csrf!,
  };
}

export function sessionHeaders(session: Session): Record<string, string> {
  return { cookie: session.cookie, 'x-csrf-token': session.csrf };
}
