/**
 * Two error messages that used to leave the user guessing: a CA certificate file that is
 * not there (which file, from which flag or variable, and where the local stack keeps its
 * own), and a 429 (how many seconds to wait, from Retry-After).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  t = await testApp();
  await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-ca-')) };
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('a missing CA file', () => {
  const missing = join(tmpdir(), 'no-such-dir-sluice', 'cert.pem');

  it('names the file, the flag, and the local stack certificate', async () => {
    const r = await runCli(['token', 'api', '--ca-file', missing], { stdin: 'slk_x\n', env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(missing);
    expect(r.stderr).toContain('--ca-file');
    expect(r.stderr).not.toContain('SLUICE_CA_FILE');
    expect(r.stderr).toContain('.sluice/tls/cert.pem');
    expect(r.stderr).not.toMatch(/ENOENT.*open/);
  });

  it('names SLUICE_CA_FILE when the path came from the environment', async () => {
    const r = await runCli(['whoami'], { env: { ...env, SLUICE_TOKEN: 'a.b.c', SLUICE_CA_FILE: missing } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(missing);
    expect(r.stderr).toContain('SLUICE_CA_FILE');
    expect(r.stderr).toContain('.sluice/tls/cert.pem');
  });
});

describe('429', () => {
  it('says how many seconds to wait', async () => {
    let last = { code: 0, stdout: '', stderr: '' };
    for (let i = 0; i < 12 && last.code !== 1; i++)
      last = await runCli(['token', 'user', 'nobody', '--password-stdin'], {
        stdin: 'wrong-password\n',
        env,
      });
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/try again in \d+ s/);
    expect(last.stderr).not.toContain('try again later');
  });
});
