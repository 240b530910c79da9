import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor, userToken } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await testApp();
  admin = await bootstrapTestAdmin(t);
});
afterAll(() => t.close());

describe('roles and tenants', () => {
  it('gives a worker token 403 on admin routes', async () => {
    const worker = await tokenFor(t, { role: 'worker' });
    for (const path of ['/api/users', '/api/api-keys', '/api/workers', '/api/enrollment-secrets']) {
      const res = await t.request(path, { headers: bearer(worker) });
      expect(res.status, path).toBe(403);
      expect((await json(res)).error.code).toBe('forbidden');
    }
    expect((await t.request('/api/auth/me', { headers: bearer(worker) })).status).toBe(200);
  });

  it('gives a viewer 403 on writes, and lets it read', async () => {
    const viewer = await tokenFor(t, { role: 'viewer' });
    expect((await t.request('/api/workers', { headers: bearer(viewer) })).status).toBe(200);
    const res = await t.request('/api/workers', jsonInit('POST', { id: 'sneaky' }, bearer(viewer)));
    expect(res.status).toBe(403);
    const workers = await json(await t.request('/api/workers', { headers: bearer(admin) }));
    expect(workers.map((w: { id: string }) => w.id)).not.toContain('sneaky');
  });

  it('keeps an admin of tenant A out of tenant B', async () => {
    const adminA = await tokenFor(t, { role: 'admin', tenant: 'tenant-a' });
    await t.request(
      '/api/workers',
      jsonInit(
        'POST',
        { id: 'b-only-worker' },
        bearer(
          await userToken(t, 'admin', 'correct-horse-battery-staple', { tenant: 'tenant-b' }).catch(
            async () => {
              await t.request('/api/tenants', jsonInit('POST', { name: 'tenant-b' }, bearer(admin)));
              return await userToken(t, 'admin', 'correct-horse-battery-staple', { tenant: 'tenant-b' });
            },
          ),
        ),
      ),
    );
    const seen = await json(await t.request('/api/workers', { headers: bearer(adminA) }));
    expect(seen.map((w: { id: string }) => w.id)).not.toContain('b-only-worker');
    expect((await t.request('/api/workers/b-only-worker', { headers: bearer(adminA) })).status).toBe(404);
    const res = await t.request(
      '/api/users',
      jsonInit(
        'POST',
        { username: 'intruder', password: 'intruder-password', role: 'admin', tenant: 'tenant-b' },
        bearer(adminA),
      ),
    );
    expect(res.status).toBe(403);
    const tenant = await t.request('/api/tenants', jsonInit('POST', { name: 'tenant-c' }, bearer(adminA)));
    expect(tenant.status).toBe(403);
  });
});

describe('bad input changes nothing', () => {
  const usernames = async () =>
    (await json(await t.request('/api/users', { headers: bearer(admin) }))).map(
      (u: { username: string }) => u.username,
    );

  it('refuses usernames with unicode look-alikes', async () => {
    const before = await usernames();
    for (const username of ['аdmin', 'ＡＤＭＩＮ', 'Admin', 'a b', '']) {
      const res = await t.request(
        '/api/users',
        jsonInit('POST', { username, password: 'look-alike-password', role: 'viewer' }, bearer(admin)),
      );
      expect(res.status, username).toBe(400);
      expect((await json(res)).error.details[0].path).toBe('username');
    }
    expect(await usernames()).toEqual(before);
  });

  it('refuses short passwords, unknown fields, non-JSON and oversized bodies', async () => {
    const before = await usernames();
    const short = await t.request(
      '/api/users',
      jsonInit('POST', { username: 'shorty', password: 'short', role: 'viewer' }, bearer(admin)),
    );
    expect(short.status).toBe(400);
    const extra = await t.request(
      '/api/users',
      jsonInit(
        'POST',
        { username: 'extra', password: 'long-enough-pass', role: 'viewer', admin: true },
        bearer(admin),
      ),
    );
    expect(extra.status).toBe(400);
    const notJson = await t.request('/api/users', {
      method: 'POST',
      headers: { ...bearer(admin), 'content-type': 'application/json' },
      body: '{"username":',
    });
    expect(notJson.status).toBe(400);
    expect((await json(notJson)).error.code).toBe('invalid_request');
    const text = await t.request('/api/tokens/create/user', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'admin',
    });
    expect(text.status).toBe(415);
    const huge = await t.request(
      '/api/users',
      jsonInit(
        'POST',
        { username: 'huge', password: 'x'.repeat(2 * 1024 * 1024), role: 'viewer' },
        bearer(admin),
      ),
    );
    expect(huge.status).toBe(413);
    expect(await usernames()).toEqual(before);
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After after 10 failed logins for a user', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await t.request(
        '/api/tokens/create/user',
        jsonInit('POST', { username: 'target-user', password: `guess-number-${i}` }),
      );
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });
});

describe('secrets never reach the logs', () => {
  it('logs no password, key or token used in this file', async () => {
    const created = await json(
      await t.request(
        '/api/api-keys',
        jsonInit('POST', { name: 'log-probe', role: 'viewer' }, bearer(admin)),
      ),
    );
    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [
      'correct-horse-battery-staple',
      created.key,
      admin,
      'look-alike-password',
      'long-enough-pass',
    ]) {
      expect(logs).not.toContain(secret);
    }
  });
});
