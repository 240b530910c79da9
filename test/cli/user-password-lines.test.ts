/**
 * A password is one line: `sluice user create --password-stdin` and an admin's
 * `sluice user passwd OTHER` refuse standard input holding a line break (after the one trailing
 * newline they drop), and send nothing. The hint for a missing pipe names a real-looking file.
 */
import { mkdtempSync } from 'node:fs';
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
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = {
    SLUICE_SERVER: server.url,
    SLUICE_TOKEN: token,
    SLUICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sluice-pw-')),
  };
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const cli = (args: string[], stdin?: string) =>
  runCli(args, { env, ...(stdin === undefined ? {} : { stdin }) });
const signIn = async (user: string, password: string) =>
  (
    await runCli(['token', 'user', user, '--password-stdin'], {
      stdin: `${password}\n`,
      env: { SLUICE_SERVER: server.url },
    })
  ).code;

describe('passwords with line breaks', () => {
  it('user create refuses them and creates nobody', async () => {
    for (const stdin of ['alicepassword-a1\nalicepassword-b2\n', 'alicepassword-a1\ralicepassword-b2']) {
      const r = await cli(['user', 'create', 'carol', '--role', 'viewer', '--password-stdin'], stdin);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('line');
    }
    const ls = await cli(['user', 'ls', '-o', 'json']);
    expect(ls.stdout).not.toContain('carol');
  });

  it('an admin reset refuses them, points to the two-line form, and changes nothing', async () => {
    const created = await cli(
      ['user', 'create', 'alice', '--role', 'viewer', '--password-stdin'],
      'alicepassword-00\n',
    );
    expect(created.code).toBe(0);
    const r = await cli(['user', 'passwd', 'alice'], 'alicepassword-a1\nalicepassword-b2\n');
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('password changed');
    expect(r.stderr).toContain('current password, then the new one');
    expect(await signIn('alice', 'alicepassword-00')).toBe(0);
    const crlf = await cli(['user', 'passwd', 'alice'], 'alicepassword-a1\r\nx\r\n');
    expect(crlf.code).toBe(2);
    expect(await signIn('alice', 'alicepassword-00')).toBe(0);
  });

  it('still takes one line with its trailing newline (LF or CRLF)', async () => {
    expect((await cli(['user', 'passwd', 'alice'], 'alicepassword-11\r\n')).code).toBe(0);
    expect(await signIn('alice', 'alicepassword-11')).toBe(0);
  });

  it('your own change refuses a line break inside either line', async () => {
    const r = await cli(['user', 'passwd', 'admin'], `${ADMIN_PASSWORD}\nnew-admin-pass\rword\n`);
    expect(r.code).toBe(2);
    expect(await signIn('admin', ADMIN_PASSWORD)).toBe(0);
  });
});

describe('the hint when nothing is piped', () => {
  it('names a file without spaces', async () => {
    const r = await cli(['secret', 'set', 'app/db', '--value-stdin']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cat secret-value.txt | sluice');
    const own = await cli(['user', 'passwd', 'admin']);
    expect(own.code).toBe(2);
    expect(own.stderr).toContain('cat current-and-new-password.txt | sluice');
  });
});
