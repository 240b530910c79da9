import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  await runCli(['context', 'set', 'global', 'interval=5m', 'batch=500'], { env });
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const cli = (...args: string[]) => runCli(args, { env });

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
