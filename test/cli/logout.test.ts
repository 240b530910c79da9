/**
 * `sluice logout` forgets the stored login for the server (--server / SLUICE_SERVER) and
 * says so, naming when the token itself stops working: the API has no way to revoke one
 * bearer token (`POST /api/auth/logout` ends browser sessions only), so the CLI does not
 * pretend to. With no stored login it says there was none, exit 0. Run as a user runs it:
 * the real executable, in its own process.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

const root = resolve(import.meta.dirname, '../..');
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

/** The real `sluice` executable with `args`, SLUICE_TOKEN unset unless `extra` sets it. */
function sluice(args: string[], extra: NodeJS.ProcessEnv) {
  const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_SERVER: server.url, ...extra };
  if (!('SLUICE_TOKEN' in extra)) delete env.SLUICE_TOKEN;
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(root, 'bin/sluice.js'), ...args],
      { env, cwd: root },
      (err, stdout, stderr) =>
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const credentials = (dir: string) => JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8'));

async function loggedIn(): Promise<{ dir: string; expiresAt: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-logout-'));
  const login = await runCli(['login', 'admin', '--password-stdin'], {
    stdin: `${ADMIN_PASSWORD}\n`,
    env: { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir },
  });
  expect(login.code).toBe(0);
  return { dir, expiresAt: credentials(dir)[server.url].expires_at };
}

describe('sluice logout', () => {
  it('forgets the stored login for this server, keeps the others, and says until when the token stays valid', async () => {
    const { dir, expiresAt } = await loggedIn();
    const other = {
      token: 'a.b.c',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      username: 'ops',
      tenant: 'default',
    };
    writeFileSync(
      join(dir, 'credentials.json'),
      JSON.stringify({ ...credentials(dir), 'https://other.example.com': other }),
      { mode: 0o600 },
    );

    const r = await sluice(['logout'], { SLUICE_CONFIG_DIR: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`logged out of ${server.url}`);
    expect(r.stderr).toContain('admin');
    // Nothing was revoked: the message names when the token stops working.
    expect(r.stderr).toContain(`stays valid until ${expiresAt}`);
    expect(r.stderr).toContain('sluice user passwd admin');

    const left = credentials(dir);
    expect(Object.keys(left)).toEqual(['https://other.example.com']);
    expect(statSync(join(dir, 'credentials.json')).mode & 0o777).toBe(0o600);

    const who = await sluice(['whoami'], { SLUICE_CONFIG_DIR: dir });
    expect(who.code).toBe(3);
    expect(who.stderr).toContain('not logged in');
  }, 30_000);

  it('with no stored login, says there was none and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-logout-none-'));
    const r = await sluice(['logout'], { SLUICE_CONFIG_DIR: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`no stored login for ${server.url}`);
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);

    // A second logout after a real one: nothing left.
    const { dir: twice } = await loggedIn();
    expect((await sluice(['logout'], { SLUICE_CONFIG_DIR: twice })).code).toBe(0);
    const again = await sluice(['logout'], { SLUICE_CONFIG_DIR: twice });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`no stored login for ${server.url}`);
  }, 30_000);

  it('forgets an expired login too, saying it had expired', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-logout-expired-'));
    const expiredAt = new Date(Date.now() - 3_600_000).toISOString();
    writeFileSync(
      join(dir, 'credentials.json'),
      JSON.stringify({
        [server.url]: { token: 'a.b.c', expires_at: expiredAt, username: 'admin', tenant: 'default' },
      }),
      { mode: 0o600 },
    );
    const r = await runCli(['logout'], { env: { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`logged out of ${server.url}`);
    expect(r.stderr).toContain(`had expired at ${expiredAt}`);
    expect(credentials(dir)).toEqual({});
  });

  it('finds the login under another spelling of the server (--server URL/)', async () => {
    const { dir } = await loggedIn();
    const r = await runCli(['logout', '--server', `${server.url}/`], { env: { SLUICE_CONFIG_DIR: dir } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('logged out of');
    expect(credentials(dir)).toEqual({});
  });

  it('warns when SLUICE_TOKEN is set, since later commands still send it', async () => {
    const { dir } = await loggedIn();
    const r = await runCli(['logout'], {
      env: { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir, SLUICE_TOKEN: 'x.y.z' },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: SLUICE_TOKEN is set/);
    expect(credentials(dir)).toEqual({});
  });

  it('has --help, and takes no arguments (exit 2)', async () => {
    const help = await runCli(['logout', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Forget the stored login/);
    expect(help.stdout).toMatch(/stays valid until it expires/);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-logout-args-'));
    const extra = await runCli(['logout', 'admin'], { env: { SLUICE_CONFIG_DIR: dir } });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('too many arguments');
  });
});
