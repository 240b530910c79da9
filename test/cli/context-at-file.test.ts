/**
 * `sluice context set SCOPE KEY=@FILE` takes the value from a file, `KEY=@-` from standard
 * input, as kubectl and curl do with `@`. The text (one trailing newline dropped, as
 * `--value-stdin` does) follows the rule of a typed VALUE: JSON when it parses, else a
 * string. `KEY=@@...` is text that starts with `@`. Bad input sends nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;
const dir = mkdtempSync(join(tmpdir(), 'sluice-at-file-'));
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

beforeAll(async () => {
  served = await servedCli();
});
afterAll(() => served.close());

const cli = (args: string[], stdin?: string) => served.run(args, stdin);
const read = async (...scope: string[]) =>
  JSON.parse((await cli(['context', 'get', ...scope, '-o', 'json'])).stdout) as Record<string, unknown>;

describe('KEY=@FILE', () => {
  it('takes the value from the file: JSON when it parses, else the text, one trailing newline dropped', async () => {
    const json = file('filters.json', '{"include": ["a", "b"], "limit": 5}\n');
    const text = file('greeting.txt', 'hello world\n');
    const lines = file('query.sql', 'SELECT *\nFROM t\n\n');
    const number = file('batch.txt', '500\r\n');
    const r = await cli([
      'context',
      'set',
      'job',
      'ingest',
      `filters=@${json}`,
      `greeting=@${text}`,
      `query=@${lines}`,
      `batch=@${number}`,
      '-o',
      'json',
    ]);
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      filters: { include: ['a', 'b'], limit: 5 },
      greeting: 'hello world',
      query: 'SELECT *\nFROM t\n',
      batch: 500,
    });
  });

  it('KEY=@- reads the value from standard input', async () => {
    const r = await cli(['context', 'set', 'global', 'hosts=@-', 'plain=1', '-o', 'json'], '["h1","h2"]\n');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ hosts: ['h1', 'h2'], plain: 1 });
    const text = await cli(['context', 'set', 'worker', 'edge-1', 'motd=@-', '-o', 'json'], 'be nice\n');
    expect(text.code).toBe(0);
    expect(JSON.parse(text.stdout)).toEqual({ motd: 'be nice' });
  });

  it('KEY=@@... is text that starts with @', async () => {
    const r = await cli(['context', 'set', 'global', 'handle=@@sluice', 'at=@@', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ handle: '@sluice', at: '@' });
  });

  it('a file that cannot be read is an error naming it and the escape, and nothing is sent', async () => {
    expect((await cli(['context', 'set', 'global', 'keep=1'])).code).toBe(0);
    const missing = join(dir, 'no-such-file');
    const r = await cli(['context', 'set', 'global', 'keep=2', `x=@${missing}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot read ${missing}`);
    expect(r.stderr).toContain('x=@@');
    const folder = await cli(['context', 'set', 'global', 'keep=3', `x=@${dir}`]);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain('directory');
    const binary = await cli([
      'context',
      'set',
      'global',
      'keep=4',
      `x=@${file('bin', Buffer.from([0xff, 0xfe, 0x00]))}`,
    ]);
    expect(binary.code).toBe(1);
    expect(binary.stderr).toContain('UTF-8');
    const big = await cli([
      'context',
      'set',
      'global',
      'keep=5',
      `x=@${file('big', 'a'.repeat(300 * 1024))}`,
    ]);
    expect(big.code).toBe(1);
    expect(big.stderr).toContain('256 KiB');
    expect(await read('global')).toMatchObject({ keep: 1 });
  });

  it('standard input is read once and must be piped: usage errors, nothing sent', async () => {
    const twice = await cli(['context', 'set', 'global', 'a=@-', 'b=@-'], '1');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('standard input');
    const tty = await cli(['context', 'set', 'global', 'a=@-']);
    expect(tty.code).toBe(2);
    expect(tty.stderr).toContain('pipe');
    const empty = await cli(['context', 'set', 'global', 'a=@']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('a=@FILE');
    const tokenToo = await cli(['--token-stdin', 'context', 'set', 'global', 'a=@-'], 'x.y.z');
    expect(tokenToo.code).toBe(2);
    const global = await read('global');
    expect(global).not.toHaveProperty('a');
    expect(global).not.toHaveProperty('b');
  });

  it('--help says it', async () => {
    const help = (await cli(['context', 'set', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('KEY=@FILE');
    expect(help).toContain('KEY=@-');
    expect(help).toContain('@@');
  });
});
