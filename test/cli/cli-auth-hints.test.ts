/**
 * What the CLI tells you to do after a 401 or 403 depends on what was refused: a password,
 * key or secret sent without a token (check it), a token from SLUICE_TOKEN or --token (it
 * is invalid or expired: unset or renew it), the stored login (log in again), or the current
 * password of `sluice user passwd` (it was wrong). Exit codes stay 3.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
let adminToken: string;
beforeAll(async () => {
  t = await testApp();
  adminToken = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-hints-')) };
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const LOGIN_AGAIN = 'run `sluice login` again';
const ASK_ADMIN = 'ask an admin';
/** A well-formed JWT the server refuses (no key of ours signed it). */
const BAD_JWT = `${Buffer.from('{"alg":"ES256","kid":"nope"}').toString('base64url')}.${Buffer.from(
  '{"sub":"admin"}',
).toString('base64url')}.c2lnbmF0dXJl`;

describe('hints for credentials sent without a token', () => {
  it('a wrong password on `token user` and `login` says to check the password', async () => {
    for (const args of [
      ['token', 'user', 'admin', '--password-stdin'],
      ['login', 'admin', '--password-stdin'],
    ]) {
      const r = await runCli(args, { stdin: 'wrong-password-here\n', env });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('invalid username or password');
      expect(r.stderr).toMatch(/check the (username and )?password/i);
      expect(r.stderr).not.toContain(LOGIN_AGAIN);
    }
  });

  it('a bad key on `token api` and `worker run` says to check the key', async () => {
    const api = await runCli(['token', 'api'], { stdin: 'slk_not-a-real-key\n', env });
    expect(api.code).toBe(3);
    expect(api.stderr).toMatch(/check the key/i);
    expect(api.stderr).not.toContain(LOGIN_AGAIN);

    const worker = await runCli(['worker', 'run'], { env: { ...env, SLUICE_WORKER_KEY: 'slw_bad' } });
    expect(worker.code).toBe(3);
    expect(worker.stderr).toMatch(/check the key/i);
    expect(worker.stderr).toContain('SLUICE_WORKER_KEY');
    expect(worker.stderr).not.toContain(LOGIN_AGAIN);
  });

  it('a bad secret on `worker enroll` says to check the enrollment secret', async () => {
    const r = await runCli(['worker', 'enroll', '--id', 'edge-x'], { stdin: 'sle_not-a-secret\n', env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/check the enrollment secret/i);
    expect(r.stderr).not.toContain(LOGIN_AGAIN);
  });
});

describe('hints for a refused token', () => {
  it('names SLUICE_TOKEN when the environment token is refused', async () => {
    const r = await runCli(['whoami'], { env: { ...env, SLUICE_TOKEN: BAD_JWT } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('SLUICE_TOKEN');
    expect(r.stderr).toMatch(/invalid or expired/);
    expect(r.stderr).toMatch(/unset SLUICE_TOKEN/);
    expect(r.stderr).not.toContain(LOGIN_AGAIN);
  });

  it('names --token when the token on the command line is refused', async () => {
    const r = await runCli(['--token', BAD_JWT, 'whoami'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('--token');
    expect(r.stderr).toMatch(/invalid or expired/);
    expect(r.stderr).not.toContain(LOGIN_AGAIN);
  });

  it('says to log in again when the stored login is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-stale-'));
    writeFileSync(
      join(dir, 'credentials.json'),
      JSON.stringify({
        [server.url]: {
          token: BAD_JWT,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          username: 'admin',
          tenant: 'default',
        },
      }),
      { mode: 0o600 },
    );
    const r = await runCli(['whoami'], { env: { ...env, SLUICE_CONFIG_DIR: dir } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(LOGIN_AGAIN);
  });

  it('`login` with SLUICE_TOKEN set warns that SLUICE_TOKEN still wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-precedence-'));
    const withEnv = { ...env, SLUICE_CONFIG_DIR: dir, SLUICE_TOKEN: BAD_JWT };
    const login = await runCli(['login', 'admin', '--password-stdin'], {
      stdin: ADMIN_PASSWORD,
      env: withEnv,
    });
    expect(login.code).toBe(0);
    expect(login.stderr).toMatch(/warning: SLUICE_TOKEN .*precedence/);
    const plain = await runCli(['login', 'admin', '--password-stdin'], {
      stdin: ADMIN_PASSWORD,
      env: { ...env, SLUICE_CONFIG_DIR: dir },
    });
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toContain('warning');
    // And following the hint works: without SLUICE_TOKEN, the stored login answers.
    const who = await runCli(['whoami'], { env: { ...env, SLUICE_CONFIG_DIR: dir } });
    expect(who.code).toBe(0);
  });

  it('a 403 for a missing role still says to ask an admin', async () => {
    const created = await runCli(['api-key', 'create', 'reader', '--role', 'viewer', '-o', 'json'], {
      env: { ...env, SLUICE_TOKEN: adminToken },
    });
    expect(created.code).toBe(0);
    const viewer = await runCli(['token', 'api'], { stdin: JSON.parse(created.stdout).key, env });
    expect(viewer.code).toBe(0);
    const r = await runCli(['variable', 'set', 'X', '1'], {
      env: { ...env, SLUICE_TOKEN: viewer.stdout.trim() },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(ASK_ADMIN);
  });
});

describe('hint for a wrong current password', () => {
  it('`user passwd` of your own password with a wrong current one says so', async () => {
    const created = await runCli(['user', 'create', 'dora', '--role', 'viewer', '--password-stdin'], {
      stdin: 'dora-password-0001\n',
      env: { ...env, SLUICE_TOKEN: adminToken },
    });
    expect(created.code).toBe(0);
    const token = await runCli(['token', 'user', 'dora', '--password-stdin'], {
      stdin: 'dora-password-0001\n',
      env,
    });
    expect(token.code).toBe(0);
    const r = await runCli(['user', 'passwd', 'dora'], {
      stdin: 'not-the-current-one\ndora-password-0002\n',
      env: { ...env, SLUICE_TOKEN: token.stdout.trim() },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/current password .*wrong/i);
    expect(r.stderr).not.toContain(ASK_ADMIN);
  });
});
