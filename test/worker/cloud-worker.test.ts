import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let upstream: Server;
let hits = 0;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  upstream = createServer((_req, res) => {
    hits++;
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

describe('the built-in cloud worker', () => {
  it('runs a trigger-less job deployed to it once, in the scheduled tick, and records the run', async () => {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    const yaml = `name: cloud-once\ninput:\n  http-poll:\n    url: ${url}\n    json: true\noutput:\n  print: {}\n`;
    await t.request('/api/jobs/cloud-once', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(
      (await t.request('/api/jobs/cloud-once/deploy', jsonInit('POST', { workers: ['cloud'] }, admin)))
        .status,
    ).toBe(200);

    const results = await cloudTick(t.deps);
    expect(results.map((r) => r.job)).toContain('cloud-once');
    expect(hits).toBe(1);
    await cloudTick(t.deps);
    expect(hits).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    const events = await json(await t.request('/api/events?job=cloud-once&worker=cloud', { headers: admin }));
    expect(events.events.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['job-run-started', 'job-run-ended']),
    );
  });

  it('resolves variables for jobs it runs, and reports what is missing instead of running with the literal text', async () => {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    const yaml = `name: cloud-vars\ninput:\n  http-poll:\n    url: '${url}\${dyn|SUFFIX}'\n    json: true\noutput:\n  print: {}\n`;
    await t.request('/api/jobs/cloud-vars', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(
      (await t.request('/api/jobs/cloud-vars/deploy', jsonInit('POST', { workers: ['cloud'] }, admin)))
        .status,
    ).toBe(200);
    const before = hits;
    await cloudTick(t.deps);
    expect(hits).toBe(before);
    const errors = await json(
      await t.request('/api/events?type=job-errors&job=cloud-vars', { headers: admin }),
    );
    expect(errors.events[0].payload.reason).toBe('missing variable SUFFIX');

    await t.request('/api/variables/SUFFIX', jsonInit('PUT', { value: 'x' }, admin));
    await cloudTick(t.deps);
    expect(hits).toBe(before + 1);
  });

  it('reads a job that is not due again only when it is, or when it is staged again', async () => {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    const yaml = `name: cloud-hourly\ninput:\n  http-poll:\n    url: ${url}\n    json: true\n    trigger:\n      interval: { duration: 1h }\noutput:\n  print: {}\n`;
    await t.request('/api/jobs/cloud-hourly', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    await t.request('/api/jobs/cloud-hourly/deploy', jsonInit('POST', { workers: ['cloud'] }, admin));
    const before = hits;
    const first = await cloudTick(t.deps);
    expect(first.find((r) => r.job === 'cloud-hourly')?.outcome).toBe('completed');
    expect(hits).toBe(before + 1);
    const next = first.find((r) => r.job === 'cloud-hourly')!.nextDueMs!;
    expect(next - Date.now()).toBeGreaterThan(59 * 60_000);

    // Due in an hour: the next tick neither runs it nor reads more of it than its deployment.
    const second = await cloudTick(t.deps);
    expect(second.map((r) => r.job)).not.toContain('cloud-hourly');
    expect(hits).toBe(before + 1);

    // Staged again: the next tick looks at it (and finds it not due: the interval counts from its last run).
    expect((await t.request('/api/jobs/cloud-hourly/stage', jsonInit('POST', {}, admin))).status).toBe(200);
    const third = await cloudTick(t.deps);
    expect(third.find((r) => r.job === 'cloud-hourly')?.outcome).toBe('not-due');
    expect(hits).toBe(before + 1);
  });
});
