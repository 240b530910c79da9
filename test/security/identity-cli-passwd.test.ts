/** Issue 16, item 2 in the CLI: `sluice user passwd` for oneself sends the current password too. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { createUser, loginStatus } from './identity-helpers.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
const configDir = () => mkdtempSync(join(tmpdir(), 'sluice-passwd-'));
beforeAll(async () => {
  t = await testApp();
  await createUser(t, await bootstrapTestAdmin(t), {
    username: 'lena',
    password: 'lena-old-password',
    role: 'viewer',
  });
  server = await serveTestApp(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('sluice user passwd', () => {
  it('asks for the current password when you change your own', async () => {
    const env = { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: configDir() };
    expect(
      (await runCli(['login', 'lena', '--password-stdin'], { stdin: 'lena-old-password', env })).code,
    ).toBe(0);
    const bare = await runCli(['user', 'passwd', 'lena'], { stdin: 'lena-new-password\n', env });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('the current password, then the new one');
    const wrong = await runCli(['user', 'passwd', 'lena'], {
      stdin: 'not-the-old-one\nlena-new-password\n',
      env,
    });
    expect(wrong.code).toBe(3);
    expect(await loginStatus(t, 'lena', 'lena-old-password')).toBe(201);
    const right = await runCli(['user', 'passwd', 'lena'], {
      stdin: 'lena-old-password\nlena-new-password\n',
      env,
    });
    expect(right.code).toBe(0);
    expect(await loginStatus(t, 'lena', 'lena-new-password')).toBe(201);
  });

  it('lets an admin reset another user’s password with the new one alone', async () => {
    const env = { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: configDir() };
    expect((await runCli(['login', 'admin', '--password-stdin'], { stdin: ADMIN_PASSWORD, env })).code).toBe(
      0,
    );
    const reset = await runCli(['user', 'passwd', 'lena'], { stdin: 'lena-reset-password\n', env });
    expect(reset.code).toBe(0);
    expect(await loginStatus(t, 'lena', 'lena-reset-password')).toBe(201);
  });
});
