/**
 * The README's set-up: `bin/` on PATH gives a `sluice` command, and SLUICE_CA_FILE makes
 * it trust the local stack's self-signed certificate without a flag on every command.
 * Run as a user runs it: `sluice` found through PATH, in its own process, over HTTPS.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestAppOverHttps, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-on-path-'));
let t: TestApp;
let server: Awaited<ReturnType<typeof serveTestAppOverHttps>>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestAppOverHttps(t, dir);
  env = {
    ...process.env,
    PATH: `${resolve('bin')}:${process.env.PATH}`,
    SLUICE_SERVER: server.url,
    SLUICE_TOKEN: token,
    SLUICE_CONFIG_DIR: join(dir, 'config'),
  };
  delete env.SLUICE_CA_FILE;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** `sluice ARGS` from a shell in another folder, found through PATH. */
function sluice(args: string, extra: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile('sh', ['-c', `sluice ${args}`], { env: { ...env, ...extra }, cwd: dir }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('sluice on PATH', () => {
  it('trusts the certificate named by SLUICE_CA_FILE', async () => {
    const r = await sluice('whoami -o json', { SLUICE_CA_FILE: server.certPath });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ subject: 'admin' });
  }, 30_000);

  it('refuses the self-signed certificate without it, saying so', async () => {
    const r = await sluice('whoami');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/certificate/i);
  }, 30_000);
});
