// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * A job may use more secrets than one `POST /api/worker/secrets/resolve` takes (100). The
 * worker runtime asked for all of them at once, was refused (400), took that for an outage
 * and retried for ever: the job never ran. It now asks 100 at a time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { jsonInit } from '../helpers/http.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';
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
  const worker = await startInProcessWorker(t, admin, 'many-secrets');
  try {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    const refs = Array.from({ length: SECRETS }, (_, i) => `\${secret|many/s${i}}`).join('');
    await deployJob(
      t,
      admin,
      'uses-many',
      ['many-secrets'],
      `name: uses-many\ninput:\n  http-poll:\n    url: '${url}'\n    headers:\n      x-all: '${refs}'\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`,
    );
    await worker.until(() => seen.length > 0, 20_000, 'a request of the job');
    expect(seen[0]).toBe(Array.from({ length: SECRETS }, (_, i) => `v${i}.`).join(''));
  } finally {
    await worker.stop();
  }
}, 60_000);
