/**
 * The runner (the scheduled function: the cloud worker and the outbox) issues and verifies
 * no token, so it must not be able to read the signing keys: a job that escaped its
 * sandbox on the runner would otherwise mint a system-admin token. `check:deploy` holds
 * terraform to that.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkRunnerSecrets, loadTerraform } from '../../scripts/check-deploy.ts';

/** A copy of terraform/ with one file's text replaced. */
function terraformWith(file: string, from: string, to: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tf-'));
  cpSync('terraform', dir, { recursive: true });
  const text = readFileSync(join(dir, file), 'utf8');
  expect(text).toContain(from);
  writeFileSync(join(dir, file), text.replace(from, to));
  return dir;
}

describe('the runner reads no signing key', () => {
  it('holds for the repository as it is', async () => {
    const check = checkRunnerSecrets(await loadTerraform());
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
  });

  it('fails when the runner is granted every secret again', async () => {
    const dir = terraformWith(
      'secrets.tf',
      'for_each  = local.runner_secret_ids',
      'for_each  = local.secret_ids',
    );
    const check = checkRunnerSecrets(await loadTerraform(dir));
    expect(check.ok).toBe(false);
    expect(check.problems.join('\n')).toMatch(/gives the runner signing_key/);
  });

  it('fails when the runner function is given the signing keys', async () => {
    const dir = terraformWith(
      'functions.tf',
      'runner = { kind = "runs", paths = [], secrets = ["secrets"] }',
      'runner = { kind = "runs", paths = [], secrets = ["secrets", "signing"] }',
    );
    const check = checkRunnerSecrets(await loadTerraform(dir));
    expect(check.ok).toBe(false);
    expect(check.problems.join('\n')).toMatch(/the signing keys reach runner \(kind runs, secrets signing\)/);
  });
});
