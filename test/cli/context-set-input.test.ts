/**
 * `sluice context set` refuses input that would do something other than what was typed
 * (`--replace` with nothing to set), says when a value is stored otherwise than it may look
 * (a number too large, text that looks like JSON), and `--unset` takes one key, so arguments
 * after it stay arguments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAssignment } from '../../cli/commands/context.ts';
import { CliError } from '../../cli/exit-codes.ts';
import { type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;

beforeAll(async () => {
  served = await servedCli();
});
afterAll(() => served.close());

const cli = (...args: string[]) => served.run(args);
const read = async (...scope: string[]) =>
  JSON.parse((await cli('context', 'get', ...scope, '-o', 'json')).stdout) as Record<string, unknown>;

describe('sluice context set --replace with nothing to set', () => {
  it('is a usage error that changes nothing, for the global map and a worker map', async () => {
    expect((await cli('context', 'set', 'global', 'keep=1')).code).toBe(0);
    expect((await cli('context', 'set', 'worker', 'edge-9', 'keep=2')).code).toBe(0);

    const global = await cli('context', 'set', 'global', '--replace');
    expect(global.code).toBe(2);
    expect(global.stderr).toContain('--clear');
    const worker = await cli('context', 'set', 'worker', 'edge-9', '--replace');
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('--clear');
    const job = await cli('context', 'set', 'job', 'j9', '--replace');
    expect(job.code).toBe(2);

    expect(await read('global')).toMatchObject({ keep: 1 });
    expect(await read('worker', 'edge-9')).toEqual({ keep: 2 });
  });

  it('--clear empties a map on purpose, and takes nothing else', async () => {
    expect((await cli('context', 'set', 'worker', 'edge-8', 'a=1', 'b=2')).code).toBe(0);
    const mixed = await cli('context', 'set', 'worker', 'edge-8', '--clear', 'c=3');
    expect(mixed.code).toBe(2);
    expect((await cli('context', 'set', 'worker', 'edge-8', '--clear', '--unset', 'a')).code).toBe(2);
    expect((await cli('context', 'set', 'job', 'j8', '--clear')).code).toBe(2);
    expect(await read('worker', 'edge-8')).toEqual({ a: 1, b: 2 });

    const cleared = await cli('context', 'set', 'worker', 'edge-8', '--clear', '-o', 'json');
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout)).toEqual({});
    expect(await read('worker', 'edge-8')).toEqual({});
  });
});

describe('sluice context set values', () => {
  it('are JSON when they parse, else strings, as the contract says; a lossy number is said on stderr', async () => {
    const r = await cli(
      'context',
      'set',
      'global',
      'account=12345678901234567890',
      'n=500',
      'neg=-2.5',
      'on=true',
      'interval=5m',
      'list=[1, 2]',
      '-o',
      'json',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      account: 12345678901234567000,
      n: 500,
      neg: -2.5,
      on: true,
      interval: '5m',
      list: [1, 2],
    });
    expect(r.stderr).toContain(
      `note: account: 12345678901234567890 is too large for a JSON number and is stored as 12345678901234567000; to keep it as text, write it as a JSON string: account='"12345678901234567890"'`,
    );
  });

  it('keeps a value that starts like JSON but does not parse as text, and says so', async () => {
    const r = await cli('context', 'set', 'global', 'filters=["a"', '-o', 'json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ filters: '["a"' });
    expect(r.stderr).toMatch(/note: filters: not valid JSON .*; stored as text/);
  });

  it('takes a JSON string as a string, which forces one', async () => {
    const r = await cli('context', 'set', 'global', 'raw="[a"', 'num="42"', '-o', 'json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ raw: '[a', num: '42' });
  });
});

describe('parseAssignment', () => {
  it('parses JSON and leaves the rest as text, saying only what surprises', () => {
    const notes: string[] = [];
    const parse = (text: string) => parseAssignment(text, (note) => notes.push(note));
    expect(parse('a=5m')).toEqual(['a', '5m']);
    expect(parse('a=0')).toEqual(['a', 0]);
    expect(parse('a=1.50')).toEqual(['a', 1.5]);
    expect(parse('a=null')).toEqual(['a', null]);
    expect(parse('a=')).toEqual(['a', '']);
    expect(parse('a={"b":[1,{"c":"[x"}]}')).toEqual(['a', { b: [1, { c: '[x' }] }]);
    expect(notes).toEqual([]);
    expect(parse('a=9007199254740993')).toEqual(['a', 9007199254740992]);
    expect(parse("a={'b':1}")).toEqual(['a', "{'b':1}"]);
    expect(notes).toHaveLength(2);
  });

  it('throws a usage error without KEY=', () => {
    expect(() => parseAssignment('novalue')).toThrow(CliError);
  });
});

describe('sluice context set --unset', () => {
  it('leaves the arguments after it alone, and repeats for several keys', async () => {
    expect((await cli('context', 'set', 'worker', 'edge-1', 'old_key=1', 'x=1', 'y=2')).code).toBe(0);
    const r = await cli(
      'context',
      'set',
      'worker',
      'edge-1',
      '--unset',
      'old_key',
      'interval=45m',
      '-o',
      'json',
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ x: 1, y: 2, interval: '45m' });
    const both = await cli(
      'context',
      'set',
      'worker',
      'edge-1',
      '--unset',
      'x',
      '--unset',
      'y',
      '-o',
      'json',
    );
    expect(both.code).toBe(0);
    expect(JSON.parse(both.stdout)).toEqual({ interval: '45m' });
  });

  it('says to repeat --unset when keys follow it', async () => {
    const r = await cli('context', 'set', 'global', '--unset', 'a', 'b');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--unset b');
  });
});
