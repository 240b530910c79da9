import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretRedactor } from '../../functions/runner/redact.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { startWorkerProcess } from '../helpers/worker-process.ts';

const KEY = 'query-secret-5d1e77a0';
const TOKEN = 'header-secret/with?chars&=9b2c';
let t: TestApp;
let api: { url: string; close(): Promise<void> };
let admin: Record<string, string>;
let upstream: Server;
let child: ChildProcess | undefined;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  api = await serveTestApp(t);
  // An upstream that refuses, echoing what it was sent (as many APIs do in their errors).
  upstream = createServer((req, res) => {
    res.statusCode = 401;
    if (req.url?.startsWith('/echo')) return res.end(`bad request for ${req.url}`);
    // `/padded`: the header echoed where the 200-character excerpt of an answer cuts it in two.
    if (req.url?.startsWith('/padded'))
      return res.end(`${'.'.repeat(200 - 'Bearer '.length - 20)}${req.headers.authorization}`);
    res.end(`denied ${req.url} for ${req.headers.authorization}`);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  child?.kill('SIGKILL');
  upstream.close();
  await api.close();
  await t.close();
});

describe('secret values in what a job reports', () => {
  it('are replaced by their names in log lines, events and deployment states', async () => {
    const put = (path: string, value: string) =>
      t.request(`/api/secrets/${path}`, jsonInit('PUT', { value }, admin));
    expect((await put('api/key', KEY)).status).toBe(204);
    expect((await put('api/token', TOKEN)).status).toBe(204);
    const { key } = await json(await t.request('/api/workers', jsonInit('POST', { id: 'redact-w' }, admin)));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data?key=\${secret|api/key}`;
    const yaml = `name: leaky\ninput:\n  http-poll:\n    url: '${url}'\n    headers:\n      authorization: 'Bearer \${secret|api/token}'\noutput:\n  print: {}\n`;
    await t.request('/api/jobs/leaky', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(
      (await t.request('/api/jobs/leaky/deploy', jsonInit('POST', { workers: ['redact-w'] }, admin))).status,
    ).toBe(200);

    const worker = startWorkerProcess(api.url, key, 'redact');
    child = worker.child;

    // The one-shot job fails; its reason reaches the event log and the deployment state.
    let errors: { payload: { reason: string } }[] = [];
    let deployment: { state: string; error?: string } | undefined;
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && !(errors.length && deployment?.state === 'failed')) {
      await new Promise((r) => setTimeout(r, 500));
      errors = (await json(await t.request('/api/events?type=job-errors&job=leaky', { headers: admin })))
        .events;
      deployment = (await json(await t.request('/api/jobs/leaky', { headers: admin }))).deployments[0];
    }
    expect(errors.length, worker.output()).toBeGreaterThan(0);
    expect(errors[0]!.payload.reason).toContain('401');
    expect(errors[0]!.payload.reason).toContain('[secret api/key]');
    expect(deployment?.state).toBe('failed');
    expect(worker.output()).toContain('[secret api/token]');

    const everything = [
      worker.output(),
      JSON.stringify(await json(await t.request('/api/events?limit=1000', { headers: admin }))),
      JSON.stringify(await json(await t.request('/api/jobs/leaky', { headers: admin }))),
      JSON.stringify(await json(await t.request('/api/workers/redact-w', { headers: admin }))),
      t.logs(),
    ].join('\n');
    for (const secret of [KEY, TOKEN, encodeURIComponent(TOKEN)]) expect(everything).not.toContain(secret);
  }, 60_000);
});

describe('a secret cut in two by an excerpt', () => {
  it('is hidden from its first characters on, in events and deployment states', async () => {
    expect((await t.request('/api/secrets/api/token', jsonInit('PUT', { value: TOKEN }, admin))).status).toBe(
      204,
    );
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/padded`;
    await t.request('/api/jobs/leaky-cut', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: `name: leaky-cut\ninput:\n  http-poll:\n    url: '${url}'\n    headers:\n      authorization: 'Bearer \${secret|api/token}'\noutput:\n  print: {}\n`,
    });
    expect(
      (await t.request('/api/jobs/leaky-cut/deploy', jsonInit('POST', { workers: ['cloud'] }, admin))).status,
    ).toBe(200);
    await cloudTick(t.deps);

    const job = await json(await t.request('/api/jobs/leaky-cut', { headers: admin }));
    const deployment = job.deployments.find((d: { worker: string }) => d.worker === 'cloud');
    expect(deployment).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('[secret api/token]…'),
    });
    const events = JSON.stringify(
      await json(await t.request('/api/events?job=leaky-cut&limit=1000', { headers: admin })),
    );
    expect(events).toContain('[secret api/token]…');
    // The excerpt held the token's first 20 characters.
    expect(`${JSON.stringify(job)}\n${events}\n${t.logs()}`).not.toContain(TOKEN.slice(0, 8));
  }, 60_000);
});

describe('a secret an upstream echoes as the HTTP client encoded it', () => {
  it('is hidden in that form too (a space escaped, a slash and a caret not, in a query)', async () => {
    const odd = 'Hunter2 leak/me^now';
    expect((await t.request('/api/secrets/api/odd', jsonInit('PUT', { value: odd }, admin))).status).toBe(
      204,
    );
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/echo?p=\${secret|api/odd}`;
    await t.request('/api/jobs/leaky-echo', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: `name: leaky-echo\ninput:\n  http-poll:\n    url: '${url}'\noutput:\n  print: {}\n`,
    });
    expect(
      (await t.request('/api/jobs/leaky-echo/deploy', jsonInit('POST', { workers: ['cloud'] }, admin)))
        .status,
    ).toBe(200);
    await cloudTick(t.deps);

    const events = JSON.stringify(
      await json(await t.request('/api/events?job=leaky-echo&type=job-errors', { headers: admin })),
    );
    // The client sent `?p=Hunter2%20leak/me^now`, which the upstream echoed.
    expect(events).toContain('bad request for /echo?p=[secret api/odd]');
    const job = JSON.stringify(await json(await t.request('/api/jobs/leaky-echo', { headers: admin })));
    expect(`${events}\n${job}\n${t.logs()}`).not.toMatch(/Hunter2/);
  }, 60_000);
});

describe('secret values in what a run on the cloud worker leaves', () => {
  it('are replaced by their names in the deployment state and its transitions', async () => {
    expect((await t.request('/api/secrets/api/key', jsonInit('PUT', { value: KEY }, admin))).status).toBe(
      204,
    );
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data?key=\${secret|api/key}`;
    await t.request('/api/jobs/leaky-cloud', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: `name: leaky-cloud\ninput:\n  http-poll:\n    url: '${url}'\noutput:\n  print: {}\n`,
    });
    expect(
      (await t.request('/api/jobs/leaky-cloud/deploy', jsonInit('POST', { workers: ['cloud'] }, admin)))
        .status,
    ).toBe(200);
    await cloudTick(t.deps);

    const job = await json(await t.request('/api/jobs/leaky-cloud', { headers: admin }));
    const deployment = job.deployments.find((d: { worker: string }) => d.worker === 'cloud');
    expect(deployment).toMatchObject({ state: 'failed', error: expect.stringContaining('[secret api/key]') });
    const transitions = JSON.stringify(
      await json(
        await t.request('/api/events?type=job-state-transition&job=leaky-cloud', { headers: admin }),
      ),
    );
    expect(transitions).toContain('[secret api/key]');
    expect(`${JSON.stringify(job)}\n${transitions}`).not.toContain(KEY);
  }, 60_000);
});

describe('secretRedactor', () => {
  it('replaces raw, URL-encoded and JSON-escaped forms at any depth, longest first', () => {
    const redact = secretRedactor({ 'a/short': 'abc', 'a/long': 'abc"def', 'a/empty': '' });
    expect(redact({ reason: 'x abc"def y abc%22def z abc\\"def', list: ['abc'], n: 3, abc: true })).toEqual({
      reason: 'x [secret a/long] y [secret a/long] z [secret a/long]',
      list: ['[secret a/short]'],
      n: 3,
      '[secret a/short]': true,
    });
    expect(secretRedactor({})('abc')).toBe('abc');
  });

  it('hides the forms an echo shows a secret in: each URL part, a form field, lower-case escapes, base64', () => {
    const value = 'Hunter2 leak/me^now';
    const redact = secretRedactor({ 'a/odd': value });
    const shown = [
      'query ?p=Hunter2%20leak/me^now',
      'component Hunter2%20leak%2Fme%5Enow',
      'form p=Hunter2+leak%2Fme%5Enow',
      'lower Hunter2%20leak%2fme%5enow',
      `basic ${Buffer.from(`user:${value}`).toString('base64')}`,
      `basic2 ${Buffer.from(`us:${value}`).toString('base64')}`,
      `b64 ${Buffer.from(value).toString('base64')}`,
      `json ${JSON.stringify({ v: value })}`,
    ];
    for (const line of shown) {
      const redacted = redact(line);
      expect(redacted, line).toContain('[secret a/odd]');
      expect(redacted, line).not.toMatch(/Hunter2|SHVudGVy|IdW50ZXIy/);
    }
  });

  it('hides the first characters of a secret where a cut text ends (…), four characters or more', () => {
    const redact = secretRedactor({ 'a/token': 'tok-1234567890', 'a/key': 'key-abcdef' });
    expect(redact('answered 401: Bearer tok-12345…; not delivered')).toBe(
      'answered 401: Bearer [secret a/token]…; not delivered',
    );
    expect(redact({ answer: 'x key-ab…', other: 'tok…', whole: 'tok-1234567890…' })).toEqual({
      answer: 'x [secret a/key]…',
      other: 'tok…',
      whole: '[secret a/token]…',
    });
    expect(redact('no cut: tok-12345')).toBe('no cut: tok-12345');
  });
});
