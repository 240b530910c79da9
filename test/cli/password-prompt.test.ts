/**
 * Passwords typed at a terminal: `sluice login USER` (with or without --password-stdin),
 * `sluice user create --password-stdin` and `sluice user passwd` ask for them without echo
 * when standard input is a terminal, a new password twice. When standard input is not a
 * terminal they read it as before, and `login` without --password-stdin is a usage error.
 * A password is never taken as an argument.
 *
 * No pty library is installed, so the prompt is proven three ways: `promptHidden` against
 * a fake terminal stream; the commands in-process with a fake prompt; the real executable
 * with a pipe, and (where util-linux `script` exists) on a real pseudo-terminal.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main.ts';
import type { CliIo } from '../../cli/output.ts';
import { promptHidden } from '../../cli/password-prompt.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

const root = resolve(import.meta.dirname, '../..');

/** A stand-in for a terminal on standard input: keys are written to it; raw mode is recorded. */
class FakeTty extends PassThrough {
  readonly isTTY = true;
  isRaw = false;
  readonly rawModes: boolean[] = [];
  setRawMode(on: boolean): this {
    this.isRaw = on;
    this.rawModes.push(on);
    return this;
  }
}

function fakeTerminal() {
  const input = new FakeTty();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (d: Buffer) => {
    shown += d;
  });
  return { input, output, shown: () => shown };
}

describe('promptHidden', () => {
  it('shows the prompt, reads one line in raw mode without echoing it, and restores the terminal', async () => {
    const term = fakeTerminal();
    const answer = promptHidden('Password: ', term);
    term.input.write('s3cret-passw');
    term.input.write('x\x7fo');
    term.input.write('rd\r');
    expect(await answer).toBe('s3cret-password');
    expect(term.shown()).toBe('Password: \n');
    expect(term.input.rawModes).toEqual([true, false]);
    expect(term.input.isPaused()).toBe(true);
  });

  it('Ctrl-C cancels (nothing sent), Ctrl-D on an empty line ends with no password; the terminal is restored', async () => {
    const ctrlC = fakeTerminal();
    const cancelled = promptHidden('Password: ', ctrlC);
    ctrlC.input.write('half\x03');
    await expect(cancelled).rejects.toThrow(/cancelled/);
    expect(ctrlC.input.isRaw).toBe(false);

    const ctrlD = fakeTerminal();
    const ended = promptHidden('Password: ', ctrlD);
    ctrlD.input.write('\x04');
    await expect(ended).rejects.toThrow(/no password/);
    expect(ctrlD.input.isRaw).toBe(false);
  });
});

describe('the commands on a terminal (a fake prompt)', () => {
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

  /** Runs the CLI as on a terminal: each prompt is answered with the next of `answers`. */
  async function onTerminal(args: string[], answers: string[], env: NodeJS.ProcessEnv) {
    const prompts: string[] = [];
    let stderr = '';
    let stdout = '';
    const io: CliIo = {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      stdinIsTty: true,
      readStdin: () => Promise.reject(new Error('standard input is a terminal: it is not read to the end')),
      promptHidden: async (prompt) => {
        prompts.push(prompt);
        const answer = answers.shift();
        if (answer === undefined) throw new Error(`unexpected prompt ${prompt}`);
        return answer;
      },
    };
    const code = await run(['node', 'sluice', ...args], io, { SLUICE_SERVER: server.url, ...env });
    return { code, prompts, stdout, stderr };
  }
  const signIn = async (user: string, password: string) =>
    (
      await runCli(['token', 'user', user, '--password-stdin'], {
        stdin: `${password}\n`,
        env: { SLUICE_SERVER: server.url },
      })
    ).code;

  it('`login USER` asks "Password:" and stores the login; so does `login USER --password-stdin`', async () => {
    for (const args of [
      ['login', 'admin'],
      ['login', 'admin', '--password-stdin'],
    ]) {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-prompt-'));
      const r = await onTerminal(args, [ADMIN_PASSWORD], { SLUICE_CONFIG_DIR: dir });
      expect(r.stderr).toContain('logged in to');
      expect(r.code).toBe(0);
      expect(r.prompts).toEqual(['Password: ']);
      expect(r.stderr).not.toContain(ADMIN_PASSWORD);
      expect(Object.keys(JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')))).toEqual([
        server.url,
      ]);
    }
  });

  it('an empty answer is a usage error, nothing sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-prompt-empty-'));
    const r = await onTerminal(['login', 'admin'], [''], { SLUICE_CONFIG_DIR: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no password');
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
  });

  it('`user create --password-stdin` asks for the new password twice; a mismatch creates nobody', async () => {
    const env = { SLUICE_TOKEN: adminToken };
    const mismatch = await onTerminal(
      ['user', 'create', 'bob', '--role', 'viewer', '--password-stdin'],
      ['bob-password-0001', 'bob-password-0002'],
      env,
    );
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toContain('did not match');
    expect(mismatch.prompts).toEqual(['New password for bob: ', 'Retype the new password: ']);
    expect(
      (await runCli(['user', 'ls', '-o', 'json'], { env: { ...env, SLUICE_SERVER: server.url } })).stdout,
    ).not.toContain('bob');

    const created = await onTerminal(
      ['user', 'create', 'bob', '--role', 'viewer', '--password-stdin'],
      ['bob-password-0001', 'bob-password-0001'],
      env,
    );
    expect(created.code).toBe(0);
    expect(await signIn('bob', 'bob-password-0001')).toBe(0);
  });

  it('`user passwd OTHER` asks for the new password twice; your own asks for the current one first', async () => {
    const reset = await onTerminal(['user', 'passwd', 'bob'], ['bob-password-0002', 'bob-password-0002'], {
      SLUICE_TOKEN: adminToken,
    });
    expect(reset.code).toBe(0);
    expect(reset.prompts).toEqual(['New password for bob: ', 'Retype the new password: ']);
    expect(await signIn('bob', 'bob-password-0002')).toBe(0);

    const bobToken = (
      await runCli(['token', 'user', 'bob', '--password-stdin'], {
        stdin: 'bob-password-0002',
        env: { SLUICE_SERVER: server.url },
      })
    ).stdout.trim();
    const own = await onTerminal(
      ['user', 'passwd', 'bob'],
      ['bob-password-0002', 'bob-password-0003', 'bob-password-0003'],
      { SLUICE_TOKEN: bobToken },
    );
    expect(own.code).toBe(0);
    expect(own.prompts).toEqual(['Current password: ', 'New password: ', 'Retype the new password: ']);
    expect(await signIn('bob', 'bob-password-0003')).toBe(0);
  });

  it('--help says the password is asked for on a terminal', async () => {
    for (const args of [
      ['login', '--help'],
      ['user', 'create', '--help'],
      ['user', 'passwd', '--help'],
    ]) {
      const help = (await runCli(args)).stdout.replace(/\s+/g, ' ');
      expect(help, args.join(' ')).toMatch(/on a terminal, .*asked for without echo/i);
    }
  });
});

describe('the real executable', () => {
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

  const envFor = (dir: string) => {
    const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_SERVER: server.url, SLUICE_CONFIG_DIR: dir };
    delete env.SLUICE_TOKEN;
    return env;
  };

  /** `sluice ARGS` with `stdin` on a pipe. */
  function piped(args: string[], stdin: string, dir: string) {
    const child = spawn(process.execPath, [join(root, 'bin/sluice.js'), ...args], {
      cwd: root,
      env: envFor(dir),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d;
    });
    child.stdin.end(stdin);
    return new Promise<{ code: number | null; out: string }>((done) =>
      child.on('close', (code) => done({ code, out })),
    );
  }

  it('with standard input on a pipe, `login USER` without --password-stdin is a usage error naming it; a password is never an argument', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-prompt-pipe-'));
    const r = await piped(['login', 'admin'], `${ADMIN_PASSWORD}\n`, dir);
    expect(r.code).toBe(2);
    expect(r.out).toContain('--password-stdin');
    expect(r.out).toContain('not a terminal');
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);

    for (const args of [
      ['login', 'admin', ADMIN_PASSWORD],
      ['login', 'admin', '--password', ADMIN_PASSWORD],
    ]) {
      const refused = await piped(args, '', dir);
      expect(refused.code, args.join(' ')).toBe(2);
    }
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);

    const ok = await piped(['login', 'admin', '--password-stdin'], `${ADMIN_PASSWORD}\n`, dir);
    expect(ok.code).toBe(0);
    expect(existsSync(join(dir, 'credentials.json'))).toBe(true);
  }, 30_000);

  // `script` (Debian's bsdutils) gives the CLI a real terminal; .ci/run installs it when missing.
  it('on a real terminal (util-linux `script`), asks "Password:" and does not echo it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-prompt-pty-'));
    const command = `'${process.execPath}' '${join(root, 'bin/sluice.js')}' login admin`;
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: root,
      env: envFor(dir),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let shown = '';
    let typed = false;
    const onData = (d: Buffer) => {
      shown += d;
      // Typed only once the prompt is up: keys typed before raw mode would be echoed by the terminal.
      if (!typed && shown.includes('Password: ')) {
        typed = true;
        child.stdin.write(`${ADMIN_PASSWORD}\r`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    const code = await new Promise<number | null>((done) => child.on('close', done));
    clearTimeout(timer);
    expect(shown).toContain('Password: ');
    expect(shown).not.toContain(ADMIN_PASSWORD);
    expect(shown).toContain('logged in to');
    expect(code).toBe(0);
    expect(existsSync(join(dir, 'credentials.json'))).toBe(true);
  }, 30_000);
});
