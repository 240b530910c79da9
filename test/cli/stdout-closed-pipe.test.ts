/**
 * Any `sluice` command whose standard output is a pipe its reader closed early
 * (`sluice events ls -o json | head -1`, `sluice events tail | head -1`) stops quietly with
 * exit 0, as `job run` does; any other failure to write (a full disk) is said, with exit 1.
 * Run as a user runs them: the real executable, its output a pipe or a file.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent, eventsCollection } from '../../functions/events/event-log.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'sluice-closed-pipe-'));
let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { ...process.env, SLUICE_SERVER: server.url, SLUICE_TOKEN: token, SLUICE_CONFIG_DIR: '/nonexistent' };
  const events = eventsCollection(await t.deps.clients.firestore(), 'default');
  for (let i = 0; i < 40; i++) {
    const event = buildEvent({ type: 'job-updated', source: 'server', job: 'piped', payload: { i } });
    await events.doc(event.id).set(event);
  }
  writeFileSync(
    join(dir, 'ok.yaml'),
    'name: ok\ninput:\n  http-poll:\n    url: http://127.0.0.1:1/\noutput:\n  print: {}\n',
  );
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/**
 * The real executable with `args`; its standard output is `stdout` (a file descriptor), or
 * a pipe the reader closes before reading (`'closed'`) or after its first chunk (`'after-first'`).
 */
function sluice(args: string[], stdout: number | 'closed' | 'after-first', onClosed: () => void = () => {}) {
  const child = spawn(process.execPath, [join(root, 'bin/sluice.js'), ...args], {
    cwd: root,
    env,
    stdio: ['ignore', typeof stdout === 'number' ? stdout : 'pipe', 'pipe'],
  });
  if (stdout === 'closed') child.stdout!.destroy();
  if (stdout === 'after-first')
    child.stdout!.once('data', () => {
      child.stdout!.destroy();
      onClosed();
    });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise<{ code: number | null; stderr: string }>((r) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      r({ code, stderr });
    }),
  );
}

describe('a standard output whose reader went away', () => {
  it('`events ls -o json | head -1` stops quietly with exit 0', async () => {
    const { code, stderr } = await sluice(['events', 'ls', '--job', 'piped', '-o', 'json'], 'closed');
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('`events tail | head -1` stops quietly with exit 0, without waiting for Ctrl-C', async () => {
    const args = ['events', 'tail', '--job', 'piped', '--since', '2000-01-01T00:00:00Z', '--interval', '100'];
    // As `tail -f | head -1`: the command learns that its reader went away when it next writes,
    // so one more event comes after the reader has gone (the first read may hold all 40).
    const { code, stderr } = await sluice(args, 'after-first', () => {
      void (async () => {
        const event = buildEvent({ type: 'job-updated', source: 'server', job: 'piped', payload: { i: 40 } });
        await eventsCollection(await t.deps.clients.firestore(), 'default')
          .doc(event.id)
          .set(event);
      })();
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('`--help | head -1` and `job validate | head -1` stop quietly too', async () => {
    for (const args of [['--help'], ['job', 'validate', join(dir, 'ok.yaml')]]) {
      const { code, stderr } = await sluice(args, 'closed');
      expect(stderr, args.join(' ')).toBe('');
      expect(code, args.join(' ')).toBe(0);
    }
  });
});

describe('a standard output that fails otherwise', () => {
  it('on a full disk, the command says it could not write its output, exit 1, no stack trace', async () => {
    const full = openSync('/dev/full', 'w');
    const run = sluice(['events', 'ls', '--job', 'piped', '-o', 'json'], full);
    closeSync(full);
    const { code, stderr } = await run;
    expect(stderr).toMatch(/^error: cannot write to standard output: .*ENOSPC/m);
    expect(stderr).not.toMatch(/node:|Unhandled|at .*\.js:\d+/);
    expect(code).toBe(1);
  });
});
