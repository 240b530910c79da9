/**
 * `ls` commands follow the list endpoints' pages (X-Next-Page-Token) to the end, or stop
 * at `--limit`; a bad `--limit` is a usage error (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
let token: string;

beforeAll(async () => {
  t = await testApp();
  token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  for (let i = 0; i < 5; i++) {
    const set = await runCli(['variable', 'set', `VAR_${i}`, String(i)], { env });
    expect(set.code).toBe(0);
  }
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('ls and pages', () => {
  it('follows every page, or stops at --limit', async () => {
    const all = await runCli(['variable', 'ls', '-o', 'json'], { env });
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout).map((v: { name: string }) => v.name)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `VAR_${i}`),
    );
    const two = await runCli(['variable', 'ls', '--limit', '2', '-o', 'json'], { env });
    expect(JSON.parse(two.stdout).map((v: { name: string }) => v.name)).toEqual(['VAR_0', 'VAR_1']);

    const client = new ApiClient({ server: server.url, token, insecureHttp: true });
    const seen: number[] = [];
    const paged = await client.list<{ name: string }>('/api/variables', {
      pageSize: 2,
      onPage: (n) => seen.push(n),
    });
    expect(paged.map((v) => v.name)).toEqual([0, 1, 2, 3, 4].map((i) => `VAR_${i}`));
    expect(seen).toEqual([2, 4, 5]);
    const three = await client.list('/api/variables', { pageSize: 2, limit: 3 });
    expect(three).toHaveLength(3);
    await client.close();
  });

  it('says what is wrong with --limit and exits 2', async () => {
    for (const limit of ['0', '-1', 'all', '1.5']) {
      const res = await runCli(['job', 'ls', '--limit', limit], { env });
      expect(res.code, limit).toBe(2);
      expect(res.stderr).toContain('--limit takes a whole number');
    }
  });
});
