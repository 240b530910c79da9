/**
 * What an operator sees for mistakes the CLI can tell before it sends anything, and a few
 * flags in the places people put them: a token that cannot be a header value, two readers
 * of one standard input, a YAML context export given to `context import`, a missing worker
 * name, `-w` before the job name, a missing subcommand, and the note that a key is shown once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;
const dir = mkdtempSync(join(tmpdir(), 'sluice-usage-fixes-'));

beforeAll(async () => {
  served = await servedCli();
  const job = join(dir, 'plain.yaml');
  writeFileSync(
    job,
    'name: plain\ninput:\n  http-poll:\n    url: http://127.0.0.1:1/\noutput:\n  print: {}\n',
  );
  expect((await cli(['job', 'apply', job])).code).toBe(0);
  expect((await cli(['job', 'stage', 'plain'])).code).toBe(0);
  for (const id of ['uw1', 'uw2', 'uw3']) expect((await cli(['worker', 'create', id])).code).toBe(0);
});
afterAll(() => served.close());

const cli = (args: string[], stdin?: string) => served.run(args, stdin);

describe('a token that cannot be sent (L1)', () => {
  it('from SLUICE_TOKEN with a line break: says the token is not valid, exit 3, not "cannot reach"', async () => {
    const r = await runCli(['job', 'ls'], {
      env: { SLUICE_SERVER: served.url, SLUICE_TOKEN: 'abc\r\nX: 1' },
    });
    expect(r.stderr).not.toMatch(/cannot reach|Is the server running/);
    expect(r.stderr).toMatch(/error: the token in SLUICE_TOKEN holds a line break/);
    expect(r.stderr).not.toContain('abc');
    expect(r.code).toBe(3);
  });

  it('from --token-stdin with two lines: names --token-stdin', async () => {
    const r = await runCli(['--token-stdin', 'job', 'ls'], {
      env: { SLUICE_SERVER: served.url },
      stdin: 't1\nt2\n',
    });
    expect(r.stderr).toMatch(/error: the token read with --token-stdin holds a line break/);
    expect(r.code).toBe(3);
  });
});

describe('two readers of standard input (L7)', () => {
  it('--token-stdin with --value-stdin is refused up front, exit 2', async () => {
    const r = await runCli(['--token-stdin', 'secret', 'set', 'sc/one', '--value-stdin'], {
      env: { SLUICE_SERVER: served.url },
      stdin: `${served.env.SLUICE_TOKEN}\nval\n`,
    });
    expect(r.stderr).toMatch(/--token-stdin and --value-stdin both read standard input/);
    expect(r.stderr).not.toContain('standard input was empty');
    expect(r.code).toBe(2);
    expect((await cli(['secret', 'ls', '-o', 'json'])).stdout).not.toContain('sc/one');
  });

  it('--token-stdin with a command that always reads standard input (worker enroll) is refused too', async () => {
    const r = await runCli(['--token-stdin', 'worker', 'enroll'], {
      env: { SLUICE_SERVER: served.url },
      stdin: 'token\nsle_secret\n',
    });
    expect(r.stderr).toMatch(/--token-stdin .*both read standard input|standard input holds one thing/);
    expect(r.code).toBe(2);
  });
});

describe('context import of a YAML export (L9)', () => {
  it('imports what `context export -o yaml` printed', async () => {
    expect((await cli(['context', 'set', 'global', 'region=eu', 'batch=500'])).code).toBe(0);
    const exported = await cli(['context', 'export', '-o', 'yaml']);
    expect(exported.code).toBe(0);
    const file = join(dir, 'global.yaml');
    writeFileSync(file, exported.stdout);
    expect((await cli(['context', 'set', 'global', 'region=us'])).code).toBe(0);
    const r = await cli(['context', 'import', file, '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ region: 'eu', batch: 500 });
  });

  it('says plainly when the file is neither JSON nor YAML', async () => {
    const file = join(dir, 'broken.txt');
    writeFileSync(file, '{ "format": [unclosed\n');
    const r = await cli(['context', 'import', file]);
    expect(r.stderr).toMatch(/is not JSON or YAML/);
    // Exit 1, as a broken export file has always been (test/cli/context.test.ts).
    expect(r.code).toBe(1);
  });
});

describe('context set without a worker or job name (L8)', () => {
  it('`context set worker a=1` says the worker name is missing, exit 2', async () => {
    const r = await cli(['context', 'set', 'worker', 'a=1']);
    expect(r.stderr).toMatch(/missing the worker name/);
    expect(r.code).toBe(2);
    const job = await cli(['context', 'set', 'job', 'a=1']);
    expect(job.stderr).toMatch(/missing the job name/);
    expect(job.code).toBe(2);
  });
});

describe('-w before the job name (L2)', () => {
  it('`job deploy -w uw1 plain` deploys', async () => {
    const r = await cli(['job', 'deploy', '-w', 'uw1', 'plain']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/uw1\s+pending/);
  });

  it('-w repeated and comma lists both name several workers', async () => {
    const r = await cli(['job', 'deploy', '-w', 'uw2', '-w', 'uw3', 'plain', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).map((d: { worker: string }) => d.worker)).toEqual(
      expect.arrayContaining(['uw2', 'uw3']),
    );
    const off = await cli(['job', 'undeploy', '-w', 'uw2,uw3', 'plain', '-o', 'json']);
    expect(off.code, off.stderr).toBe(0);
  });

  it('`job render -w uw1 plain` renders; two workers are refused, exit 2', async () => {
    const r = await cli(['job', 'render', '-w', 'uw1', 'plain', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const two = await cli(['job', 'render', '-w', 'uw1,uw2', 'plain']);
    expect(two.stderr).toMatch(/one worker/);
    expect(two.code).toBe(2);
  });
});

describe('a missing subcommand (L6)', () => {
  it('bare `sluice` and `sluice job` print help and exit 2; --help still exits 0', async () => {
    for (const args of [[], ['job']]) {
      const r = await runCli(args);
      expect(r.stderr, args.join(' ')).toMatch(/Usage: sluice/);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect((await runCli(['job', '--help'])).code).toBe(0);
    expect((await runCli(['help'])).code).toBe(0);
  });
});

describe('keys shown once (L14)', () => {
  it('`worker rotate-key` says to store the key now', async () => {
    const r = await cli(['worker', 'rotate-key', 'uw1']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/store the key now: it is not shown again/);
  });

  it('`worker enroll` says to store the key now', async () => {
    const created = await cli(['enrollment-secret', 'create', 'once', '-o', 'json']);
    expect(created.code, created.stderr).toBe(0);
    const { secret } = JSON.parse(created.stdout) as { secret: string };
    const r = await cli(['worker', 'enroll', '--id', 'enrolled-once'], secret);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/store the key now: it is not shown again/);
  });
});
