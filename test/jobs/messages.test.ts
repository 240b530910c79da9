import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let adminToken: string;
let admin: Record<string, string>;
const workers: Record<string, Record<string, string>> = {};

beforeAll(async () => {
  t = await testApp();
  adminToken = await bootstrapTestAdmin(t);
  admin = bearer(adminToken);
  server = await serveTestApp(t);
  for (const id of ['mw1', 'mw2']) {
    const { key } = await json(await t.request('/api/workers', jsonInit('POST', { id }, admin)));
    workers[id] = bearer(await apiKeyToken(t, key));
  }
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** Everything waiting for a worker (long poll until quiet), acknowledged. */
async function drain(worker: Record<string, string>) {
  const all: Record<string, unknown>[] = [];
  for (;;) {
    const { messages } = await json(await t.request('/api/worker/messages?wait=2s', { headers: worker }));
    if (!messages.length) return all;
    all.push(...messages);
    await t.request(
      '/api/worker/messages/ack',
      jsonInit('POST', { ack_ids: messages.map((m: { ack_id: string }) => m.ack_id) }, worker),
    );
  }
}

const cli = (args: string[], stdin?: string, token = adminToken) =>
  runCli(args, { env: { SLUICE_SERVER: server.url, SLUICE_TOKEN: token }, ...(stdin ? { stdin } : {}) });

describe('POST /api/messages', () => {
  it('records a user message as an event and delivers it to every worker', async () => {
    const operator = bearer(await tokenFor(t, { role: 'operator' }));
    const res = await t.request(
      '/api/messages',
      jsonInit('POST', { tags: ['nightly'], payload: { run: 7 }, job: 'etl' }, operator),
    );
    expect(res.status).toBe(201);
    const { id } = await json(res);
    const { events } = await json(await t.request('/api/events?type=user-generated', { headers: admin }));
    expect(events).toEqual([
      expect.objectContaining({
        id,
        type: 'user-generated',
        kind: 'user',
        source: 'server',
        job: 'etl',
        tags: ['nightly'],
        payload: { run: 7 },
      }),
    ]);
    for (const worker of ['mw1', 'mw2']) {
      const got = await drain(workers[worker]!);
      expect(got.filter((m) => m.id === id)).toHaveLength(1);
    }
  }, 30_000);

  it('delivers to one worker when it names one', async () => {
    const res = await t.request(
      '/api/messages',
      jsonInit('POST', { type: 'user-alert', tags: [], worker: 'mw2' }, admin),
    );
    const { id } = await json(res);
    expect((await drain(workers.mw2!)).map((m) => [m.id, m.type, m.kind])).toEqual([
      [id, 'user-alert', 'user'],
    ]);
    expect(await drain(workers.mw1!)).toEqual([]);
  }, 30_000);

  it('refuses system types, bad bodies, viewers and workers, recording nothing', async () => {
    const before = (await json(await t.request('/api/events?limit=1000', { headers: admin }))).events.length;
    for (const body of [{ type: 'job-deployed' }, { tags: 'x' }, { payload: [1] }, { extra: 1 }]) {
      const res = await t.request('/api/messages', jsonInit('POST', body, admin));
      expect(res.status).toBe(400);
      expect((await json(res)).error.code).toBe('invalid_request');
    }
    const viewer = bearer(await tokenFor(t, { role: 'viewer' }));
    expect((await t.request('/api/messages', jsonInit('POST', {}, viewer))).status).toBe(403);
    expect((await t.request('/api/messages', jsonInit('POST', {}, workers.mw1!))).status).toBe(403);
    const after = (await json(await t.request('/api/events?limit=1000', { headers: admin }))).events.length;
    expect(after).toBe(before);
  });
});

describe('sluice message, secret and variable', () => {
  it('sends a message and lists it with sluice events', async () => {
    const sent = await cli(['message', 'send', '--tag', 'cli', '--payload', '{"n":1}', '-o', 'json']);
    expect(sent.code).toBe(0);
    const { id } = JSON.parse(sent.stdout);
    const listed = await cli(['events', 'ls', '--type', 'user-generated', '-o', 'json']);
    const events = JSON.parse(listed.stdout) as { id: string; tags: string[] }[];
    expect(events.find((e) => e.id === id)?.tags).toEqual(['cli']);
    expect((await cli(['message', 'send', '--payload', 'not json'])).code).toBe(2);
  });

  it('stores a secret from standard input without ever printing it', async () => {
    const value = 'cli-secret-value-3c1f9a';
    const set = await cli(['secret', 'set', 'db/password', '--value-stdin'], `${value}\n`);
    expect(set.code).toBe(0);
    const listed = await cli(['secret', 'ls', '-o', 'json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      { scope: 'db', name: 'password', updated_at: expect.any(String) },
    ]);
    expect((await cli(['secret', 'ls'])).stdout).toMatch(/db\s+password/);
    for (const r of [set, listed]) expect(r.stdout + r.stderr).not.toContain(value);
    expect((await cli(['secret', 'set', 'no-slash', '--value-stdin'], 'x')).code).toBe(2);
    expect((await cli(['secret', 'set', 'db/other', '--value-stdin'])).code).toBe(2);
    const operator = await tokenFor(t, { role: 'operator' });
    expect((await cli(['secret', 'ls'], undefined, operator)).code).toBe(3);
    expect((await cli(['secret', 'rm', 'db/password'])).code).toBe(0);
    expect(JSON.parse((await cli(['secret', 'ls', '-o', 'json'])).stdout)).toEqual([]);
    expect((await cli(['secret', 'rm', 'db/password'])).code).toBe(4);
    expect(t.logs()).not.toContain(value);
  });

  it('sets, lists and removes variables', async () => {
    expect((await cli(['variable', 'set', 'REGION', 'eu-west1'])).code).toBe(0);
    const listed = JSON.parse((await cli(['variable', 'ls', '-o', 'json'])).stdout);
    expect(listed).toEqual([expect.objectContaining({ name: 'REGION', value: 'eu-west1' })]);
    expect((await cli(['variable', 'rm', 'REGION'])).code).toBe(0);
    expect((await cli(['variable', 'rm', 'REGION'])).code).toBe(4);
    expect((await cli(['variable', 'set', '9bad', 'x'])).code).toBe(1);
  });
});
