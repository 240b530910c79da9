// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * Rotating a secret (a credential exposed, say) reaches the workers running jobs that use it.
 * A changed or deleted secret sent no message, so a worker kept using the old value until
 * something unrelated made it read its jobs again: for as long as nothing else changed.
 * Now a change sends `job-credentials-invalidated` (naming the secret, never its value) to
 * every worker of the tenant, and a worker restarts the jobs whose values changed; a deleted one stops them, saying why.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { jsonInit } from '../helpers/http.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';
import { deployJob, type Headers } from '../security/worker-helpers.ts';

let t: TestApp;
let admin: Headers;
let upstream: Server;
const received: string[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  upstream = createServer((req, res) => {
    received.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

const setSecret = async (value: string) =>
  expect((await t.request('/api/secrets/rot/key', jsonInit('PUT', { value }, admin))).status).toBe(204);

it('restarts a job with the new value of a secret it uses, and stops it when the secret is deleted', async () => {
  await setSecret('OLDVALUE');
  const worker = await startInProcessWorker(t, admin, 'rotates');
  try {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data?k=\${secret|rot/key}`;
    await deployJob(
      t,
      admin,
      'uses-key',
      ['rotates'],
      `name: uses-key\ninput:\n  http-poll:\n    url: '${url}'\n    json: true\n    trigger:\n      interval:\n        duration: 200ms\noutput:\n  print: {}\n`,
    );
    await worker.until(() => received.some((u) => u.endsWith('k=OLDVALUE')), 15_000, 'the old value in use');
    await setSecret('NEWVALUE');
    await worker.until(() => received.some((u) => u.endsWith('k=NEWVALUE')), 10_000, 'the new value in use');
    // Restarted for the new value, and the value is in none of its log lines.
    expect(worker.log.filter((line) => line === 'uses-key: starting version 1')).toHaveLength(2);
    expect(worker.log.join('\n')).not.toContain('NEWVALUE');

    expect((await t.request('/api/secrets/rot/key', { method: 'DELETE', headers: admin })).status).toBe(204);
    await worker.until(
      () => worker.log.some((line) => line.startsWith('uses-key: cannot run') && line.includes('rot/key')),
      10_000,
      'the job stopped for want of its secret',
    );
  } finally {
    await worker.stop();
  }
}, 60_000);
