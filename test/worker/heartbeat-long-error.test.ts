/**
 * A job's error of any length reaches the control plane. The heartbeat takes a job's error
 * of at most 2,000 characters, and the worker runtime sent the whole error of a failed run:
 * a job whose URL is long failed with an error quoting it, every heartbeat was then refused
 * (400), its reports waited behind them, and the worker went offline while it was running.
 * The runtime now sends the error's first 2,000 characters, cut with a mark.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';
import { deployJob, type Headers, storedDeployments } from '../security/worker-helpers.ts';

let t: TestApp;
let admin: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

/** A loopback port nothing listens on: a request to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

it('reports a failed job whose error is longer than a heartbeat takes', async () => {
  const worker = await startInProcessWorker(t, admin, 'long-error');
  try {
    const url = `http://127.0.0.1:${await closedPort()}/${'segment/'.repeat(300)}`;
    await deployJob(
      t,
      admin,
      'long-url',
      ['long-error'],
      `name: long-url\ninput:\n  http-poll:\n    url: '${url}'\noutput:\n  print: {}\n`,
    );
    const deployment = async () => (await storedDeployments(t, 'long-url'))['long-error'];
    await worker.until(async () => (await deployment())?.state === 'failed', 20_000, 'the job failed');
    const error = ((await deployment()) as { error?: string }).error ?? '';
    expect(error.length).toBeLessThanOrEqual(2000);
    expect(error).toMatch(/^.*127\.0\.0\.1.*segment\/segment\/.*…$/s);
    expect(worker.log.filter((line) => line.startsWith('heartbeat failed'))).toEqual([]);
  } finally {
    await worker.stop();
  }
}, 60_000);
