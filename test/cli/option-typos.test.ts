/**
 * A mistyped option is reported as what it is, with commander's suggestion, even on a
 * command with a required option; a missing argument is named before a missing option;
 * and a required option left out is still a usage error (exit 2). No server is reached:
 * SLUICE_SERVER points nowhere.
 */
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const env = { SLUICE_SERVER: 'https://127.0.0.1:1', SLUICE_TOKEN: 'x.y.z' };

it('names a mistyped option and suggests the right one, though a required option is missing', async () => {
  const r = await runCli(['job', 'deploy', 'web', '--wroker', 'w1'], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("unknown option '--wroker'");
  expect(r.stderr).toContain('Did you mean --worker?');
});

it('names a missing argument before a missing required option', async () => {
  const r = await runCli(['job', 'deploy'], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("missing required argument 'name'");
});

it('still refuses a required option left out, naming it', async () => {
  for (const args of [
    ['job', 'deploy', 'web'],
    ['job', 'render', 'web'],
    ['context', 'resolve', '--job', 'web'],
    ['user', 'create', 'ann'],
  ]) {
    const r = await runCli(args, { env });
    expect(r.code, args.join(' ')).toBe(2);
    expect(r.stderr, args.join(' ')).toMatch(/required option '[^']+' not specified/);
  }
});
