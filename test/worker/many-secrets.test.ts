// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * A job may use more secrets than one `POST /api/worker/secrets/resolve` takes (100). The
 * worker runtime asked for all of them at once, was refused (400), took that for an outage
 * and retried for ever: the job never ran. It now asks 100 at a time.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runWorker } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { inProcessWorkerApi } from '../helpers/worker-api.ts';
import { deployJob, type Headers } from '../security/worker-helpers.ts';

const SECRETS = 130;
let t: TestApp;
let admin: Headers;
let upstream: Server;
const seen: string[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  for (let i = 0; i < SECRETS; i++)
    expect(
      (await t.request(`/api/secrets/many/s${i}`, jsonInit('PUT', { value: `v${i}.` }, admin))).status,
    ).toBe(204);
  upstream = createServer((req, res) => {
    seen.push(String(req.headers['x-all']));
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

it('runs a job that uses more secrets than one request resolves', async () => {
  const key = (await json(await t.request('/api/workers', jsonInit('POST', { id: 'many-secrets' }, admin))))
    .key;
  const token = (await json(await t.request('/api/tokens/create/api', jsonInit('POST', { key }))))
    .token as string;
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
  const refs = Array.from({ length: SECRETS }, (_, i) => `\${secret|many/s${i}}`).join('');
  await deployJob(
    t,
    admin,
    'uses-many',
    ['many-secrets'],
    `name: uses-many\ninput:\n  http-poll:\n    url: '${url}'\n    headers:\n      x-all: '${refs}'\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`,
  );
  const controller = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const log: string[] = [];
  const done = runWorker({
    api: async () => inProcessWorkerApi(t, bearer(token), inFlight),
    worker: 'many-secrets',
    output: { write: async () => {}, close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), 'sluice-many-secrets-'))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 300,
    waitSeconds: 1,
    apiCodeOf: (err) => (err as { code?: string }).code,
  });
  try {
    const deadline = Date.now() + 20_000;
    while (!seen.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(seen[0], log.join('\n')).toBe(Array.from({ length: SECRETS }, (_, i) => `v${i}.`).join(''));
  } finally {
    controller.abort();
    await done.catch(() => {});
    await Promise.allSettled([...inFlight]);
  }
}, 60_000);
