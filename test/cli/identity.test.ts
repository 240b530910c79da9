import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  t = await testApp();
  await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-cli-')) };
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('sluice token, login, whoami', () => {
  it('prints only the JWT for `token user --password-stdin`', async () => {
    const r = await runCli(['token', 'user', 'admin', '--password-stdin', '--ttl', '10m'], {
      stdin: `${ADMIN_PASSWORD}\n`,
      env,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
  });

  it('exits 3 with a hint on a wrong password, and 2 without stdin', async () => {
    const wrong = await runCli(['token', 'user', 'admin', '--password-stdin'], {
      stdin: 'nope-nope-nope',
      env,
    });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('invalid username or password');
    const noStdin = await runCli(['token', 'user', 'admin', '--password-stdin'], { env });
    expect(noStdin.code).toBe(2);
  });

  it('logs in, keeps the token in a 0600 file, and says who you are', async () => {
    const login = await runCli(['login', 'admin', '--password-stdin'], { stdin: ADMIN_PASSWORD, env });
    expect(login.code).toBe(0);
    expect(statSync(join(env.SLUICE_CONFIG_DIR!, 'credentials.json')).mode & 0o777).toBe(0o600);
    const who = await runCli(['whoami', '-o', 'json'], { env });
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ subject: 'admin', tenant: 'default', roles: ['admin'] });
  });

  it('creates workers and API keys, exchanges keys, and maps 404 to exit 4', async () => {
    await runCli(['login', 'admin', '--password-stdin'], { stdin: ADMIN_PASSWORD, env });
    const created = await runCli(['worker', 'create', 'cli-worker', '--label', 'zone=a', '-o', 'json'], {
      env,
    });
    expect(created.code).toBe(0);
    const { key } = JSON.parse(created.stdout);
    const token = await runCli(['token', 'api'], { stdin: key, env });
    expect(token.code).toBe(0);
    const ls = await runCli(['worker', 'ls'], { env });
    expect(ls.stdout).toMatch(/ID\s+STATE/);
    expect(ls.stdout).toContain('cli-worker');
    const missing = await runCli(['worker', 'rm', 'no-such-worker'], { env });
    expect(missing.stderr).toContain('no worker no-such-worker');
    expect(missing.code).toBe(4);
    const apiKey = await runCli(['api-key', 'create', 'ci', '--role', 'viewer', '-o', 'yaml'], { env });
    expect(apiKey.stdout).toMatch(/key: slk_/);
  });

  it('exits 3 when not logged in', async () => {
    const r = await runCli(['whoami'], {
      env: { ...env, SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-empty-')) },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('sluice login');
  });
});
