/**
 * Issue 16, item 11 (SSRF): a job's URL may not make the runner connect to the metadata
 * server, link-local, loopback or private addresses (unless the deployment allows them),
 * neither directly nor through a redirect. Performed against a real HTTP server on
 * 127.0.0.1, through the real runner and through the `cloud` worker of the API.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../functions/runner/egress/policy.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { RunEvent, RunReport } from '../../functions/runner/types.ts';
import { validateJob } from '../../shared/job/validate.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';

let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url!);
    if (req.url === '/to-metadata') {
      res.writeHead(302, {
        location: 'http://169.254.169.254/computeMetadata/v1/instance/service-accounts/',
      });
      return res.end();
    }
    if (req.url === '/hop') {
      res.writeHead(302, { location: '/hop' });
      return res.end();
    }
    if (req.url === '/to-self') {
      res.writeHead(302, { location: '/data' });
      return res.end();
    }
    res.end('{"secret":"internal"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

/** Runs a one-shot http-poll job through the real runner; returns its events and reports. */
async function run(url: string, allow: string[], extra: Record<string, unknown> = {}) {
  const parsed = validateJob(
    { name: 'probe', input: { 'http-poll': { url, timeout: '3s', ...extra } }, output: { print: {} } },
    { level: 'rendered' },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const events: RunEvent[] = [];
  const reports: RunReport[] = [];
  const controller = new AbortController();
  await runJob(parsed.job, {
    worker: 'test',
    output: { write: async (batch) => void events.push(...batch), close: async () => {} },
    ...fileStores(mkdtempSync(join(tmpdir(), 'sluice-egress-'))),
    signal: controller.signal,
    report: (r) => reports.push(r),
    egress: new EgressPolicy(allow),
  }).catch(() => {});
  const reasons = reports.filter((r) => r.type === 'job-errors').map((r) => String(r.payload.reason));
  return { events, reasons };
}

describe('the egress guard (http-poll)', () => {
  it('refuses loopback when the allow list is empty, and sends no request', async () => {
    const before = hits.length;
    const r = await run(`http://127.0.0.1:${port}/data`, []);
    expect(r.events).toEqual([]);
    expect(r.reasons).toEqual([expect.stringMatching(/^egress refused: 127\.0\.0\.1: loopback address/)]);
    expect(hits.length).toBe(before);
  });

  it('refuses a name that resolves to loopback (localhost)', async () => {
    const before = hits.length;
    const r = await run(`http://localhost:${port}/data`, []);
    expect(r.reasons).toEqual([
      expect.stringMatching(/^egress refused: localhost \((127\.0\.0\.1|::1)\): loopback/),
    ]);
    expect(hits.length).toBe(before);
  });

  it('refuses IPv4-mapped IPv6 loopback ([::ffff:127.0.0.1]) and the decimal form of 127.0.0.1', async () => {
    const before = hits.length;
    const mapped = await run(`http://[::ffff:127.0.0.1]:${port}/data`, []);
    expect(mapped.reasons).toEqual([expect.stringMatching(/^egress refused: ::ffff:7f00:1: loopback/)]);
    const decimal = await run(`http://2130706433:${port}/data`, []);
    expect(decimal.reasons).toEqual([expect.stringMatching(/^egress refused: 127\.0\.0\.1: loopback/)]);
    expect(hits.length).toBe(before);
  });

  it('refuses 0.0.0.0 even when loopback is allowed (it reaches the host itself)', async () => {
    const before = hits.length;
    const r = await run(`http://0.0.0.0:${port}/data`, ['127.0.0.0/8']);
    expect(r.reasons).toEqual([expect.stringMatching(/^egress refused: 0\.0\.0\.0: unspecified address/)]);
    expect(hits.length).toBe(before);
  });

  it('refuses the metadata server by address and by name, whatever the allow list says', async () => {
    const byAddress = await run('http://169.254.169.254/computeMetadata/v1/', ['0.0.0.0/0', '::/0']);
    expect(byAddress.reasons).toEqual([
      'egress refused: 169.254.169.254: link-local address (cloud metadata server)',
    ]);
    const byName = await run('http://metadata.google.internal/computeMetadata/v1/', ['0.0.0.0/0']);
    expect(byName.reasons).toEqual(['egress refused: metadata.google.internal: cloud metadata server']);
    const ipv6 = await run('http://[fd00:ec2::254]/latest/meta-data/', ['::/0']);
    expect(ipv6.reasons).toEqual(['egress refused: fd00:ec2::254: cloud metadata server']);
  });

  it('checks every redirect: an allowed server that redirects to the metadata server is refused at the hop', async () => {
    const r = await run(`http://127.0.0.1:${port}/to-metadata`, ['127.0.0.0/8']);
    expect(r.events).toEqual([]);
    expect(r.reasons).toEqual([
      'egress refused: 169.254.169.254: link-local address (cloud metadata server)',
    ]);
  });

  it('follows allowed redirects, at most 5', async () => {
    const ok = await run(`http://127.0.0.1:${port}/to-self`, ['127.0.0.0/8'], { json: true });
    expect(ok.events).toEqual([{ secret: 'internal' }]);
    const loop = await run(`http://127.0.0.1:${port}/hop`, ['127.0.0.0/8']);
    expect(loop.reasons).toEqual([expect.stringContaining('more than 5 redirects')]);
  });

  it('a refused connection of a triggered job is a job-errors event, and the next trigger runs again', async () => {
    const parsed = validateJob(
      {
        name: 'again',
        input: {
          'http-poll': { url: 'http://169.254.169.254/', trigger: { interval: { duration: '50ms' } } },
        },
        output: { print: {} },
      },
      { level: 'rendered' },
    );
    if (!parsed.ok) throw new Error('invalid');
    const controller = new AbortController();
    const reasons: string[] = [];
    await runJob(parsed.job, {
      worker: 'test',
      output: { write: async () => {}, close: async () => {} },
      ...fileStores(mkdtempSync(join(tmpdir(), 'sluice-egress-'))),
      signal: controller.signal,
      egress: new EgressPolicy([]),
      report: (r) => {
        if (r.type !== 'job-errors') return;
        reasons.push(String(r.payload.reason));
        if (reasons.length === 2) controller.abort();
      },
    });
    expect(reasons).toEqual([
      'egress refused: 169.254.169.254: link-local address (cloud metadata server)',
      'egress refused: 169.254.169.254: link-local address (cloud metadata server)',
    ]);
  });
});

describe('the cloud worker', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await testApp();
    admin = bearer(await bootstrapTestAdmin(t));
  });
  afterAll(() => t.close());

  it('with the cloud setting (no SLUICE_EGRESS_ALLOW) a job cannot reach a server on loopback', async () => {
    t.deps.config.egressAllow = [];
    const before = hits.length;
    const yaml = `name: reach-in\ninput:\n  http-poll:\n    url: http://127.0.0.1:${port}/data\noutput:\n  print: {}\n`;
    expect(
      (
        await t.request('/api/jobs/reach-in', {
          method: 'PUT',
          headers: { ...admin, 'content-type': 'application/yaml' },
          body: yaml,
        })
      ).status,
    ).toBe(201);
    expect(
      (await t.request('/api/jobs/reach-in/deploy', jsonInit('POST', { workers: ['cloud'] }, admin))).status,
    ).toBe(200);
    await cloudTick(t.deps);
    expect(hits.length).toBe(before);
    let reasons: string[] = [];
    for (let i = 0; i < 50 && reasons.length === 0; i++) {
      const events = await json(
        await t.request('/api/events?type=job-errors&job=reach-in', { headers: admin }),
      );
      reasons = events.events.map((e: { payload: { reason: string } }) => e.payload.reason);
      if (reasons.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(reasons).toContainEqual(expect.stringMatching(/^egress refused: 127\.0\.0\.1: loopback address/));
  });
});
