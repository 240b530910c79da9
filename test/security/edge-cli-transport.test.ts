/**
 * How the CLI handles its credentials: the token never needs to be an argument (which every
 * local user sees in the process list), the credentials file is never readable by others, and
 * keys and passwords are not sent unencrypted to another machine without an explicit flag.
 */
import {
  chmodSync,
  closeSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let token: string;
let loopback: { url: string; close(): Promise<void> };
let remote: ServerType;
let remoteUrl: string;
/** Every Authorization header and body that reached the server through its non-loopback address. */
const seenRemotely: string[] = [];

beforeAll(async () => {
  t = await testApp();
  token = await bootstrapTestAdmin(t);
  loopback = await serveTestApp(t);
  // This machine's own network address stands in for a server across the network.
  const address = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
  expect(address, 'a non-loopback IPv4 address to serve on').toBeDefined();
  remote = await new Promise<ServerType>((resolve) => {
    const s = serve(
      {
        fetch: async (req: Request) => {
          seenRemotely.push(`${req.headers.get('authorization') ?? ''} ${await req.clone().text()}`);
          return await t.app.fetch(req);
        },
        port: 0,
        hostname: address!,
      },
      () => resolve(s),
    );
  });
  remoteUrl = `http://${address}:${(remote.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => remote.close(() => resolve()));
  await loopback.close();
  await t.close();
});

const configDir = () => mkdtempSync(join(tmpdir(), 'sluice-edge-cli-'));

describe('the CLI token', () => {
  it('can come from standard input, so it never shows in the process list', async () => {
    const r = await runCli(['whoami', '-o', 'json', '--token-stdin'], {
      env: { SLUICE_SERVER: loopback.url },
      stdin: `${token}\n`,
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ subject: 'admin' });
  });

  it('on the command line still works but says who can see it and what to use instead', async () => {
    const r = await runCli(['whoami', '-o', 'json', '--token', token], {
      env: { SLUICE_SERVER: loopback.url },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('process list');
    expect(r.stderr).toContain('--token-stdin');
    expect(r.stderr).not.toContain(token);
    const both = await runCli(['whoami', '--token', token, '--token-stdin'], {
      env: { SLUICE_SERVER: loopback.url },
      stdin: token,
    });
    expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('not both') });
  });
});

describe('the credentials file', () => {
  it('never holds the new token while readable by others, even when an older version left it 0644', async () => {
    const dir = configDir();
    const file = join(dir, 'credentials.json');
    writeFileSync(file, `${JSON.stringify({ 'https://old.example': { token: 'old' } })}\n`);
    chmodSync(file, 0o644);
    // Watch the file between every turn of the event loop while `sluice login` writes it.
    const exposed: string[] = [];
    let watching = true;
    const watch = () => {
      try {
        // One open file: its mode and its text belong to the same inode, even if a rename
        // replaces the name between the two reads.
        const fd = openSync(file, 'r');
        try {
          const mode = fstatSync(fd).mode & 0o777;
          if (mode !== 0o600 && readFileSync(fd, 'utf8').includes('"username": "admin"'))
            exposed.push(mode.toString(8));
        } finally {
          closeSync(fd);
        }
      } catch {
        // Between a rename's two steps there is always a file; a failed read is not exposure.
      }
      if (watching) setImmediate(watch);
    };
    setImmediate(watch);
    const r = await runCli(['login', 'admin', '--password-stdin'], {
      env: { SLUICE_SERVER: loopback.url, SLUICE_CONFIG_DIR: dir },
      stdin: ADMIN_PASSWORD,
    });
    watching = false;
    expect(r.code).toBe(0);
    expect(exposed).toEqual([]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(Object.keys(stored).sort()).toEqual(['https://old.example', loopback.url].sort());
  });
});

describe('the CLI over plain http', () => {
  it('refuses to send a token or a password to another machine without --insecure-http', async () => {
    const env = { SLUICE_SERVER: remoteUrl, SLUICE_TOKEN: token, SLUICE_CONFIG_DIR: configDir() };
    const whoami = await runCli(['whoami'], { env });
    expect(whoami.code).toBe(2);
    expect(whoami.stderr).toContain(`refusing to send credentials unencrypted to ${remoteUrl}`);
    expect(whoami.stderr).toContain('--insecure-http');
    const login = await runCli(['login', 'admin', '--password-stdin'], { env, stdin: ADMIN_PASSWORD });
    expect(login.code).toBe(2);
    const apiToken = await runCli(['token', 'api'], { env, stdin: 'sla_not-a-real-key' });
    expect(apiToken.code).not.toBe(0);
    // Each command above has returned: anything it sent has arrived by now.
    expect(seenRemotely).toEqual([]);
  });

  it('sends with --insecure-http (or SLUICE_INSECURE_HTTP=1), and warns', async () => {
    const env = { SLUICE_SERVER: remoteUrl, SLUICE_TOKEN: token };
    const flagged = await runCli(['whoami', '--insecure-http'], { env });
    expect(flagged.code).toBe(0);
    expect(flagged.stderr).toContain('warning: sending credentials unencrypted');
    const fromEnv = await runCli(['whoami'], { env: { ...env, SLUICE_INSECURE_HTTP: '1' } });
    expect(fromEnv.code).toBe(0);
    expect(seenRemotely.filter((s) => s.startsWith(`Bearer ${token}`))).toHaveLength(2);
  });

  it('talks to this machine over http without a word (the local stack with SLUICE_HTTP=1)', async () => {
    for (const server of [loopback.url, loopback.url.replace('127.0.0.1', 'localhost')]) {
      const r = await runCli(['whoami'], { env: { SLUICE_SERVER: server, SLUICE_TOKEN: token } });
      expect({ server, code: r.code, stderr: r.stderr }).toEqual({ server, code: 0, stderr: '' });
    }
  });
});
