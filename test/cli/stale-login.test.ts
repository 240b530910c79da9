/**
 * A stored login that is no longer good, expired (seen before anything is sent) or refused
 * by the server (401: revoked, or its signing key is gone): the error names the server it
 * was for and when it expired or expires, and says `sluice login USER` with the user who
 * logged in. Exit 3. SLUICE_TOKEN still wins over a stale login.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

const root = resolve(import.meta.dirname, '../..');
let t: TestApp;
let server: { url: string; close(): Promise<void> };
let adminToken: string;

beforeAll(async () => {
  t = await testApp();
  adminToken = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** A well-formed JWT the server refuses (no key of ours signed it). */
const BAD_JWT = `${Buffer.from('{"alg":"ES256","kid":"nope"}').toString('base64url')}.${Buffer.from(
  '{"sub":"admin"}',
).toString('base64url')}.c2lnbmF0dXJl`;

/** A config folder whose credentials.json holds `login` for the test server. */
function stored(login: { token: string; expires_at: string; username: string }): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-stale-'));
  writeFileSync(
    join(dir, 'credentials.json'),
    JSON.stringify({ [server.url]: { tenant: 'default', ...login } }),
    { mode: 0o600 },
  );
  return dir;
}

/** The real `sluice` executable, SLUICE_TOKEN unset. */
function sluice(args: string[], configDir: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: configDir };
  delete env.SLUICE_TOKEN;
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

describe('an expired stored login', () => {
  it('names the server, when it expired, and `sluice login USER`, exit 3, before sending anything', async () => {
    const expiredAt = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const dir = stored({ token: adminToken, expires_at: expiredAt, username: 'admin' });
    const r = await sluice(['whoami'], dir);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(server.url);
    expect(r.stderr).toContain(`expired at ${expiredAt}`);
    expect(r.stderr).toContain('2 h ago');
    expect(r.stderr).toContain('`sluice login admin`');
    // The token itself is good: the CLI did not send it, or whoami would have answered.
    expect(r.stderr).not.toContain('subject');
  }, 30_000);

  it('names the user who logged in, not a placeholder', async () => {
    const dir = stored({
      token: 'a.b.c',
      expires_at: new Date(Date.now() - 60_000).toISOString(),
      username: 'ops-person',
    });
    const r = await runCli(['job', 'ls'], { env: { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('`sluice login ops-person`');
    expect(r.stderr).not.toContain('USERNAME');
    // SLUICE_TOKEN still takes precedence over the stored login, stale or not.
    const withEnv = await runCli(['whoami', '-o', 'json'], {
      env: { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir, SLUICE_TOKEN: adminToken },
    });
    expect(withEnv.code).toBe(0);
  });
});

describe('a stored login the server refuses (401)', () => {
  it('names the server, when the login expires, and `sluice login USER`, exit 3', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const dir = stored({ token: BAD_JWT, expires_at: expiresAt, username: 'admin' });
    const r = await runCli(['whoami'], { env: { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(server.url);
    expect(r.stderr).toContain(expiresAt);
    expect(r.stderr).toContain('`sluice login admin`');
    expect(r.stderr).toMatch(/revoked/);
  });
});
