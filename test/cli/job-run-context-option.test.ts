/**
 * `sluice job run --context KEY=VALUE...` takes several pairs after one flag (the contract's
 * form) or one flag per pair, before or after FILE. The job below never runs: it references a key no test passes, so every run stops
 * at rendering and the error names the keys still missing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-run-ctx-'));
const file = join(dir, 'job.yaml');
writeFileSync(
  file,
  'name: t\ninput:\n  http-poll:\n    url: "http://{{a}}/{{b}}/{{never}}"\noutput:\n  print: {}\n',
);
const run = (...args: string[]) =>
  runCli(['job', 'run', ...args, '--state-dir', join(dir, 'state')], { env: {} });

function missing(stderr: string): string[] {
  return [...stderr.matchAll(/missing context key `(\w+)`/g)].map((m) => m[1]!);
}

describe('sluice job run --context', () => {
  it('works before FILE', async () => {
    const r = await run('--context', 'a=1', file);
    expect(r.stderr).toContain('does not render');
    expect(r.code).toBe(1);
    expect(missing(r.stderr)).toEqual(['b', 'never']);
  });

  it('works after FILE and repeated', async () => {
    const r = await run(file, '--context', 'a=1', '--context', 'b=x');
    expect(r.code).toBe(1);
    expect(missing(r.stderr)).toEqual(['never']);
    const before = await run('--context', 'a=1', '--context', 'b=x', file);
    expect(before.code).toBe(1);
    expect(missing(before.stderr)).toEqual(['never']);
  });

  it('takes several pairs after one --context, before or after FILE', async () => {
    const after = await run(file, '--context', 'a=1', 'b=x');
    expect(after.code).toBe(1);
    expect(missing(after.stderr)).toEqual(['never']);
    const before = await run('--context', 'a=1', 'b=x', file);
    expect(before.code).toBe(1);
    expect(missing(before.stderr)).toEqual(['never']);
  });

  it('says what is missing without a file', async () => {
    const r = await run('--context', 'a=1');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing the job file');
  });

  it('keeps a value that starts like JSON but does not parse as text, and says so', async () => {
    const r = await run(file, '--context', 'a=[1', 'b=2');
    expect(r.stderr).toMatch(/note: a: not valid JSON .*; stored as text/);
    expect(missing(r.stderr)).toEqual(['never']);
  });
});
