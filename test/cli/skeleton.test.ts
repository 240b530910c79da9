import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

describe('sluice CLI basics', () => {
  it('prints help with the global flags and exits 0', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const flag of ['--server', '--token', '--ca-file', '--insecure', '--output'])
      expect(r.stdout).toContain(flag);
  });

  it('exits 2 on an unknown command, with a hint', async () => {
    const r = await runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });

  it('exits 2 on an invalid output format', async () => {
    const r = await runCli(['-o', 'xml', '--help']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('xml');
  });

  it('runs as a real executable through bin/sluice.js', () => {
    const r = spawnSync(process.execPath, ['bin/sluice.js', '--version'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('0.1.0');
  });
});
