import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli, type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;

beforeAll(async () => {
  served = await servedCli();
  await runCli(['context', 'set', 'global', 'interval=5m', 'batch=500'], { env: served.env });
});
afterAll(() => served.close());

const cli = (...args: string[]) => served.run(args);

describe('sluice context export -o', () => {
  it('prints YAML with -o yaml', async () => {
    const r = await cli('context', 'export', '-o', 'yaml');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^format: sluice-context\/v1$/m);
    expect(r.stdout.trimStart().startsWith('{')).toBe(false);
    expect(parse(r.stdout)).toMatchObject({
      format: 'sluice-context/v1',
      global: { interval: '5m', batch: 500 },
    });
  });

  it('prints JSON with -o json and by default', async () => {
    for (const args of [['-o', 'json'], []]) {
      const r = await cli('context', 'export', ...args);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ global: { interval: '5m' } });
    }
  });

  it('writes FILE as JSON, the form `context import` reads, and refuses -o yaml with a FILE (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-export-'));
    const file = join(dir, 'backup.json');
    expect((await cli('context', 'export', file)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ global: { batch: 500 } });
    const yaml = await cli('context', 'export', join(dir, 'backup.yaml'), '-o', 'yaml');
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toContain('sluice context export -o yaml >');
  });
});
