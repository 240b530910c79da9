import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let api: { url: string; close(): Promise<void> };
let admin: Record<string, string>;
let upstream: Server;
let upstreamUrl: string;
let key: string;
const children: ChildProcess[] = [];
const state = mkdtempSync(join(tmpdir(), 'sluice-worker-'));

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  api = await serveTestApp(t);
  upstream = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ from: req.url }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  key = (await json(await t.request('/api/workers', jsonInit('POST', { id: 'edge-1' }, admin)))).key;
  await t.request(
    '/api/contexts/update-global',
    jsonInit('POST', { status_url: `${upstreamUrl}/first` }, admin),
  );
  const yaml =
    "name: status\ninput:\n  http-poll:\n    url: '{{status_url}}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n";
  await t.request('/api/jobs/status', {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: yaml,
  });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  upstream.close();
  await api.close();
  await t.close();
});

function startWorker() {
  const child = spawn(
    process.execPath,
    ['bin/sluice.js', 'worker', 'run', '--server', api.url, '--state-dir', state],
    {
      env: { ...process.env, SLUICE_WORKER_KEY: key },
    },
  );
  children.push(child);
  const lines: string[] = [];
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    buffer += d;
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  return { child, lines, stderr: () => stderr };
}

async function until(check: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return check();
}

describe('the worker runtime', () => {
  it('runs a deployed job, follows a global context change within 2 s, and resumes after SIGKILL', async () => {
    const worker = startWorker();
    await new Promise((r) => setTimeout(r, 1500));
    const deploy = await t.request(
      '/api/jobs/status/deploy',
      jsonInit('POST', { workers: ['edge-1'] }, admin),
    );
    expect(deploy.status).toBe(200);
    expect(await until(() => worker.lines.some((l) => l.includes('/first')), 15_000), worker.stderr()).toBe(
      true,
    );

    await t.request(
      '/api/contexts/update-global',
      jsonInit('POST', { status_url: `${upstreamUrl}/second` }, admin),
    );
    const changedAt = Date.now();
    expect(await until(() => worker.lines.some((l) => l.includes('/second')), 2_000), worker.stderr()).toBe(
      true,
    );
    expect(Date.now() - changedAt).toBeLessThan(2_000);

    const job = await json(await t.request('/api/jobs/status', { headers: admin }));
    expect(job.deployments[0]).toMatchObject({ worker: 'edge-1', state: 'running' });

    worker.child.kill('SIGKILL');
    await new Promise((r) => worker.child.once('close', r));
    const again = startWorker();
    expect(await until(() => again.lines.some((l) => l.includes('/second')), 15_000), again.stderr()).toBe(
      true,
    );
    again.child.kill('SIGINT');
    await new Promise((r) => again.child.once('close', r));
    expect(again.child.exitCode).toBe(0);
  }, 60_000);

  it('runs a message-triggered job when a matching user message arrives, and only then', async () => {
    const yaml =
      "name: on-message\ninput:\n  http-poll:\n    url: '{{status_url}}'\n    json: true\n    trigger:\n      message:\n        filter-type: [user-generated]\n        filter-tag: go\noutput:\n  print: {}\n";
    await t.request('/api/jobs/on-message', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    await t.request('/api/jobs/status/undeploy', jsonInit('POST', {}, admin));
    const worker = startWorker();
    expect(
      (await t.request('/api/jobs/on-message/deploy', jsonInit('POST', { workers: ['edge-1'] }, admin)))
        .status,
    ).toBe(200);
    expect(await until(() => worker.stderr().includes('on-message: starting'), 15_000), worker.stderr()).toBe(
      true,
    );
    const send = (tags: string[]) =>
      t.request('/api/messages', jsonInit('POST', { tags, payload: { why: 'test' } }, admin));
    // `other` goes first; the two `go` messages after it arrive and run, which shows the
    // worker had `other` too: had it matched, there would be a third run before the second `go`'s.
    expect((await send(['other'])).status).toBe(201);
    await send(['go']);
    expect(await until(() => worker.lines.length >= 1, 10_000), worker.stderr()).toBe(true);
    await send(['go']);
    expect(await until(() => worker.lines.length >= 2, 10_000), worker.stderr()).toBe(true);
    expect(worker.lines).toHaveLength(2);
    worker.child.kill('SIGINT');
    await new Promise((r) => worker.child.once('close', r));
  }, 60_000);
});
