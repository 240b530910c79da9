/**
 * The stored login is found whatever way the same server is written: `--server` with a
 * trailing slash, upper-case scheme or host, or the default port spelled out. Logins stored
 * by older versions under the exact string given to `sluice login` are still read.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeServer, readLogin, writeLogin } from '../../cli/credentials-store.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

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

const login = {
  token: 'a.b.c',
  expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  username: 'admin',
  tenant: 'default',
};

describe('normalizeServer', () => {
  it('lower-cases scheme and host, drops the default port and trailing slashes', () => {
    expect(normalizeServer('https://127.0.0.1:8443/')).toBe('https://127.0.0.1:8443');
    expect(normalizeServer('HTTPS://Sluice.Example.COM:443//')).toBe('https://sluice.example.com');
    expect(normalizeServer('http://localhost:80')).toBe('http://localhost');
    expect(normalizeServer('https://example.com/sluice/')).toBe('https://example.com/sluice');
    expect(normalizeServer('not a url')).toBe('not a url');
  });
});

describe('the stored login key', () => {
  it('reads a login written under another spelling of the same server', async () => {
    const env = { SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-key-')) };
    await writeLogin('https://127.0.0.1:8443', login, env);
    expect(await readLogin('https://127.0.0.1:8443/', env)).toMatchObject({ token: 'a.b.c' });
    expect(await readLogin('HTTPS://127.0.0.1:8443', env)).toMatchObject({ token: 'a.b.c' });
    expect(await readLogin('https://127.0.0.1:8444', env)).toBeUndefined();
    const file = JSON.parse(readFileSync(join(env.SLUICE_CONFIG_DIR, 'credentials.json'), 'utf8'));
    expect(Object.keys(file)).toEqual(['https://127.0.0.1:8443']);
  });

  it('reads a login stored by an older version under the exact string, and replaces it on the next login', async () => {
    const env = { SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-old-')) };
    const file = join(env.SLUICE_CONFIG_DIR, 'credentials.json');
    writeFileSync(file, JSON.stringify({ 'https://Example.com:443/': login }), { mode: 0o600 });
    expect(await readLogin('https://Example.com:443/', env)).toMatchObject({ token: 'a.b.c' });
    expect(await readLogin('https://example.com', env)).toMatchObject({ token: 'a.b.c' });
    await writeLogin('https://example.com/', { ...login, token: 'd.e.f' }, env);
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual(['https://example.com']);
    expect(await readLogin('https://Example.com:443/', env)).toMatchObject({ token: 'd.e.f' });
  });

  it('`whoami --server URL/` finds the login made to URL', async () => {
    const env = { SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-slash-')) };
    const signedIn = await runCli(['login', 'admin', '--password-stdin', '--server', server.url], {
      stdin: ADMIN_PASSWORD,
      env,
    });
    expect(signedIn.code).toBe(0);
    const who = await runCli(['whoami', '--server', `${server.url}/`, '-o', 'json'], { env });
    expect(who.stderr).toBe('');
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ subject: 'admin' });
  });
});
