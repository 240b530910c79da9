/**
 * `sluice job apply -` and `sluice job validate -` read the job from standard input
 * (`helm template ... | sluice job apply -`), and name it `<stdin>` in their messages.
 * Standard input must be piped, and is read once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServedCli, servedCli } from '../helpers/cli.ts';

const root = resolve(import.meta.dirname, '../..');
let served: ServedCli;

beforeAll(async () => {
  served = await servedCli();
});
afterAll(() => served.close());

const JOB = (name: string) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: http://127.0.0.1:1/\noutput:\n  print: {}\n`;
const BAD = 'name: broken\ninput:\n  http-poll:\n    ulr: http://127.0.0.1:1/\noutput:\n  print: {}\n';

/** The real `sluice` executable with `stdin` piped into it. */
function sluice(args: string[], stdin: string) {
  const child = spawn(process.execPath, [join(root, 'bin/sluice.js'), ...args], {
    cwd: root,
    env: { ...process.env, ...served.env, SLUICE_CONFIG_DIR: '/nonexistent' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  child.stdin.end(stdin);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.on('close', (code) => done({ code, stdout, stderr })),
  );
}

describe('sluice job apply -', () => {
  it('saves the job read from standard input, as the real executable', async () => {
    const r = await sluice(['job', 'apply', '-'], JOB('from-stdin'));
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    const saved = await served.run(['job', 'get', 'from-stdin', '-o', 'yaml']);
    expect(saved.code).toBe(0);
    expect(saved.stdout).toBe(JOB('from-stdin'));
  }, 30_000);

  it('names standard input in validation errors, exit 1, nothing sent', async () => {
    const r = await served.run(['job', 'apply', '-'], BAD);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('<stdin> is not a valid job');
    expect(r.stderr).toMatch(/<stdin>:4:5: input\.http-poll/);
    expect((await served.run(['job', 'get', 'broken'])).code).toBe(4);
  });

  it('refuses a terminal and empty input (exit 2)', async () => {
    const tty = await served.run(['job', 'apply', '-']);
    expect(tty.code).toBe(2);
    expect(tty.stderr).toContain('pipe the job');
    const empty = await served.run(['job', 'apply', '-'], '\n');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('standard input was empty');
  });

  it('--help says it', async () => {
    const help = await runCli(['job', 'apply', '--help']);
    expect(help.stdout).toMatch(/- reads it from standard input/);
    expect(help.stdout).toContain('sluice job apply -');
  });
});

describe('sluice job validate -', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-stdin-'));
  const onDisk = join(dir, 'ok.yaml');
  writeFileSync(onDisk, JOB('on-disk'));

  it('checks the job read from standard input, beside files', async () => {
    const ok = await runCli(['job', 'validate', '-', onDisk], { stdin: JOB('piped') });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`<stdin>: ok\n${onDisk}: ok\n`);
    const bad = await runCli(['job', 'validate', '-'], { stdin: BAD });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^<stdin>:4:5: input\.http-poll/m);
    const json = await runCli(['job', 'validate', '-', '-o', 'json'], { stdin: JOB('piped') });
    expect(JSON.parse(json.stdout)).toEqual([{ file: '<stdin>', ok: true, details: [] }]);
  });

  it('as the real executable', async () => {
    const r = await sluice(['job', 'validate', '-'], JOB('piped'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('<stdin>: ok\n');
  }, 30_000);

  it('takes - once, and refuses a terminal (exit 2)', async () => {
    const twice = await runCli(['job', 'validate', '-', '-'], { stdin: JOB('piped') });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('once');
    const tty = await runCli(['job', 'validate', '-']);
    expect(tty.code).toBe(2);
    expect(tty.stderr).toContain('pipe the job');
  });

  it('--help says it', async () => {
    const help = await runCli(['job', 'validate', '--help']);
    expect(help.stdout).toMatch(/- reads .*standard input/);
  });
});
