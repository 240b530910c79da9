import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), 'sluice-ctx-cli-'));

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const cli = (...args: string[]) => runCli(args, { env });

describe('sluice context', () => {
  it('sets values as JSON when they parse, else as strings, and reads them back', async () => {
    const set = await cli(
      'context',
      'set',
      'global',
      'interval=5m',
      'batch=500',
      'tags=["a","b"]',
      '-o',
      'json',
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ interval: '5m', batch: 500, tags: ['a', 'b'] });
    const get = await cli('context', 'get', 'global', '-o', 'yaml');
    expect(get.stdout).toContain('interval: 5m');
  });

  it('unsets keys, replaces worker maps, and shows provenance', async () => {
    await cli('context', 'set', 'worker', 'w1', 'a=1', 'b=2');
    const replaced = await cli('context', 'set', 'worker', 'w1', 'c=3', '--replace', '-o', 'json');
    expect(JSON.parse(replaced.stdout)).toEqual({ c: 3 });
    const unset = await cli('context', 'set', 'global', '--unset', 'batch', '-o', 'json');
    expect(JSON.parse(unset.stdout)).not.toHaveProperty('batch');
    const resolved = await cli('context', 'resolve', '--job', 'j', '--worker', 'w1');
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toMatch(/interval\s+5m\s+global/);
    expect(resolved.stdout).toMatch(/c\s+3\s+worker/);
    expect(resolved.stdout).toMatch(/job\s+j\s+builtin/);
  });

  it('exports to a file and imports it back', async () => {
    const file = join(dir, 'backup.json');
    expect((await cli('context', 'export', file)).code).toBe(0);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    await cli('context', 'set', 'global', 'interval=1h');
    expect((await cli('context', 'import', file)).code).toBe(0);
    expect(JSON.parse((await cli('context', 'get', 'global', '-o', 'json')).stdout)).toEqual(saved.global);
  });

  it('exits 1 with the API’s reason for a bad key, and 2 for usage errors', async () => {
    const bad = await cli('context', 'set', 'global', 'job=x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('reserved');
    expect((await cli('context', 'set', 'worker')).code).toBe(2);
    expect((await cli('context', 'get', 'planet')).code).toBe(2);
    writeFileSync(join(dir, 'broken.json'), '{');
    expect((await cli('context', 'import', join(dir, 'broken.json'))).code).toBe(1);
  });
});
