import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), 'sluice-job-cli-'));
const file = join(dir, 'status.yaml');
const YAML =
  "# status poller\nname: status\ninput:\n  http-poll:\n    url: 'https://{{host}}/s'\noutput:\n  print: {}\n";

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  writeFileSync(file, YAML);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const cli = (...args: string[]) => runCli(args, { env });

describe('sluice job', () => {
  it('applies a file, lists it, and gets the YAML back as written', async () => {
    const applied = await cli('job', 'apply', file);
    expect(applied).toMatchObject({ code: 0, stdout: 'job status saved as version 1\n' });
    expect((await cli('job', 'ls')).stdout).toMatch(/status\s+1\s+saved/);
    expect((await cli('job', 'get', 'status', '-o', 'yaml')).stdout).toBe(YAML);
  });

  it('deploys all or nothing, renders, undeploys and removes', async () => {
    await cli('worker', 'create', 'cli-w1');
    const refused = await cli('job', 'deploy', 'status', '--worker', 'cli-w1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('worker cli-w1: missing context key `host`');
    await cli('context', 'set', 'worker', 'cli-w1', 'host=example.org');
    const deployed = await cli('job', 'deploy', 'status', '--worker', 'cli-w1');
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toMatch(/cli-w1\s+pending\s+1/);
    const rendered = await cli('job', 'render', 'status', '--worker', 'cli-w1', '-o', 'json');
    expect(JSON.parse(rendered.stdout).definition.input['http-poll'].url).toBe('https://example.org/s');
    expect((await cli('job', 'rm', 'status')).code).toBe(1);
    expect((await cli('job', 'undeploy', 'status')).code).toBe(0);
    expect((await cli('job', 'rm', 'status')).code).toBe(0);
    expect((await cli('job', 'get', 'status')).code).toBe(4);
  });

  it('lists the lifecycle events', async () => {
    const listed = await cli('events', 'ls', '--job', 'status', '-o', 'json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['job-updated', 'job-staged', 'job-deployed', 'job-removed']),
    );
  });

  it('refuses an invalid file before sending anything', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'name: bad\ninput: {}\noutput: {}\n');
    const r = await cli('job', 'apply', bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('nothing was sent');
    expect((await cli('job', 'get', 'bad')).code).toBe(4);
  });
});

describe('a failed deployment', () => {
  it('says why in job get and, shortened, in job ls', async () => {
    const admin = bearer(env.SLUICE_TOKEN!);
    const failing = join(dir, 'failing.yaml');
    writeFileSync(
      failing,
      'name: failing\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  print: {}\n',
    );
    expect((await cli('job', 'apply', failing)).code).toBe(0);
    const { key } = await json(await t.request('/api/workers', jsonInit('POST', { id: 'cli-w2' }, admin)));
    expect((await cli('job', 'deploy', 'failing', '--worker', 'cli-w2')).code).toBe(0);
    const reason =
      'request to https://example.org/s failed: fetch failed (SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain)';
    const beat = await t.request(
      '/api/worker/heartbeat',
      jsonInit(
        'POST',
        { jobs: [{ name: 'failing', state: 'failed', error: reason }] },
        bearer(await apiKeyToken(t, key)),
      ),
    );
    expect(beat.status).toBe(204);

    const got = await cli('job', 'get', 'failing');
    expect(got.code, got.stderr).toBe(0);
    expect(parse(got.stdout).deployments).toEqual([
      { worker: 'cli-w2', state: 'failed', version: 1, updated_at: expect.any(String), error: reason },
    ]);
    const asJson = JSON.parse((await cli('job', 'get', 'failing', '-o', 'json')).stdout);
    expect(asJson.deployments).toEqual([
      expect.objectContaining({ worker: 'cli-w2', state: 'failed', error: reason }),
    ]);

    const ls = await cli('job', 'ls');
    expect(ls.code, ls.stderr).toBe(0);
    const row = ls.stdout.split('\n').find((l) => l.startsWith('failing'))!;
    expect(row).toContain('cli-w2:failed (request to https://example.org/s failed…)');
    expect(row).not.toContain('SELF_SIGNED');
    const lsJson = JSON.parse((await cli('job', 'ls', '-o', 'json')).stdout);
    expect(lsJson.find((j: { name: string }) => j.name === 'failing').deployments[0].error).toBe(reason);
    expect((await cli('job', 'undeploy', 'failing')).code).toBe(0);
  });
});
