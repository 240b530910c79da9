/**
 * `sluice job run` when the job does not render: the hint to pass a value with --context
 * goes on a missing context key, naming it, and on nothing else: not on a key that was
 * passed and whose value makes the job invalid.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-run-hint-'));
const file = join(dir, 'job.yaml');
writeFileSync(
  file,
  'name: t\ninput:\n  http-poll:\n    url: "{{url}}"\n    timeout: "{{timeout}}"\noutput:\n  print: {}\n',
);
const run = (...context: string[]) =>
  runCli(
    [
      'job',
      'run',
      file,
      '--state-dir',
      join(dir, 'state'),
      ...(context.length ? ['--context', ...context] : []),
    ],
    {
      env: {},
    },
  );

describe('sluice job run: the --context hint', () => {
  it('names each missing key in the hint', async () => {
    const r = await run();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file} does not render`);
    expect(r.stderr).toContain(
      `${file}:4:10: input.http-poll.url: missing context key \`url\` (pass it with --context url=VALUE)`,
    );
    expect(r.stderr).toContain(
      `${file}:5:14: input.http-poll.timeout: missing context key \`timeout\` (pass it with --context timeout=VALUE)`,
    );
  });

  it('gives no hint when the value passed with --context makes the job invalid', async () => {
    const r = await run('url=not-a-url', 'timeout=5s');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file} does not render`);
    expect(r.stderr).toContain(`${file}:4:10: input.http-poll.url: must be an http:// or https:// URL\n`);
    expect(r.stderr).not.toContain('--context KEY=VALUE');
  });
});
