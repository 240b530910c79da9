import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-'));
const bad = join(dir, 'bad.yaml');
writeFileSync(bad, 'name: j\ninput:\n  gcs:\n    bucket_name: x\noutput:\n  print: {}\n');
const good = 'test/fixtures/jobs/gcs-full.yaml';

describe('sluice job validate', () => {
  it('prints ok and exits 0 for a valid file', async () => {
    const r = await runCli(['job', 'validate', good]);
    expect(r).toMatchObject({ code: 0, stdout: `${good}: ok\n` });
  });

  it('prints FILE:LINE:COLUMN: path: message per error and exits 1', async () => {
    const r = await runCli(['job', 'validate', bad, good]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${bad}:4:5: input.gcs.bucket_name: unknown field \`bucket_name\` at input.gcs; did you mean \`bucket-name\`?`,
    );
    expect(r.stderr).toContain(
      `${bad}:3:3: input.gcs.bucket-name: required field \`bucket-name\` is missing`,
    );
    expect(r.stdout).toBe(`${good}: ok\n`);
  });

  it('gives the errors as the contract details array with -o json', async () => {
    const r = await runCli(['job', 'validate', '-o', 'json', bad]);
    expect(r.code).toBe(1);
    const [result] = JSON.parse(r.stdout);
    expect(result.details).toContainEqual({
      path: 'input.gcs.bucket_name',
      message: 'unknown field `bucket_name` at input.gcs; did you mean `bucket-name`?',
      line: 4,
      column: 5,
    });
  });

  it('says what is wrong with a missing file', async () => {
    const r = await runCli(['job', 'validate', join(dir, 'nope.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot read the file: ENOENT');
  });

  it('exits 1 from the real executable', () => {
    const r = spawnSync(process.execPath, ['bin/sluice.js', 'job', 'validate', bad], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('did you mean `bucket-name`?');
  });
});
