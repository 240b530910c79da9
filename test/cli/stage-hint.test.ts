/**
 * A change to a deployed job does not reach its workers until it is staged (CONTRACT:
 * "the job must be staged or redeployed"): `sluice job apply` of a new version and
 * `sluice context set job J` say so on stderr with the command to run, and stay quiet
 * for a job that is not deployed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ServedCli, servedCli } from '../helpers/cli.ts';

let cli: ServedCli;
const dir = mkdtempSync(join(tmpdir(), 'sluice-stage-hint-'));
const file = (name: string, url: string) => {
  const path = join(dir, `${name}-${url.length}.yaml`);
  writeFileSync(path, `name: ${name}\ninput:\n  http-poll:\n    url: ${url}\noutput:\n  print: {}\n`);
  return path;
};

beforeAll(async () => {
  cli = await servedCli();
  expect((await cli.run(['worker', 'create', 'w1'])).code).toBe(0);
});
afterAll(() => cli.close());

it('job apply of a deployed job says the new version waits for stage', async () => {
  const first = await cli.run(['job', 'apply', file('orders', 'https://example.org/a')]);
  expect(first.code, first.stderr).toBe(0);
  // Not deployed: nothing to roll out.
  expect(first.stderr).toBe('');
  expect((await cli.run(['job', 'deploy', 'orders', '-w', 'w1'])).code).toBe(0);

  const second = await cli.run(['job', 'apply', file('orders', 'https://example.org/ab')]);
  expect(second.code, second.stderr).toBe(0);
  expect(second.stdout).toBe('job orders saved as version 2\n');
  expect(second.stderr).toBe(
    'job orders is deployed to 1 worker, which run version 1; version 2 reaches them when staged: sluice job stage orders\n',
  );
  // With -o json, stdout stays the saved job alone.
  const third = await cli.run(['job', 'apply', file('orders', 'https://example.org/abc'), '-o', 'json']);
  expect(JSON.parse(third.stdout)).toMatchObject({ name: 'orders', version: 3 });
  expect(third.stderr).toContain('sluice job stage orders');
  expect((await cli.run(['job', 'stage', 'orders'])).code).toBe(0);
});

it('context set job says the deployed job keeps its context until staged', async () => {
  const set = await cli.run(['context', 'set', 'job', 'orders', 'batch=5']);
  expect(set.code, set.stderr).toBe(0);
  expect(set.stderr).toContain('job orders is deployed to 1 worker');
  expect(set.stderr).toContain('sluice job stage orders');
  // A job not saved yet (its context may come first), and one not deployed: no hint.
  const early = await cli.run(['context', 'set', 'job', 'later', 'batch=5']);
  expect(early.code, early.stderr).toBe(0);
  expect(early.stderr).toBe('');
});
