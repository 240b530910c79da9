/**
 * A heartbeat takes at most 1,000 job states (and 1 MiB). A worker with more jobs sent them
 * all in one heartbeat, which was refused every time (400): the worker went offline while it
 * ran. It now sends its states in parts the API takes.
 * Here the API is the real one, but the worker is told it has 1,100 jobs (deploying 1,100
 * for real would take the test a minute); their runs fail at once, against a closed port.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkerApi } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';

const JOBS = 1_100;
let t: TestApp;
let admin: Record<string, string>;
let port: number;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
});
afterAll(async () => {
  await t.close();
});

it('sends the states of more jobs than one heartbeat takes, in parts', async () => {
  const sent = new Set<string>();
  let largest = 0;
  let refused = 0;
  const manyJobs = (api: WorkerApi): WorkerApi => ({
    get: async (path, options) => {
      if (path !== '/api/worker/jobs') return api.get(path, options);
      return Array.from({ length: JOBS }, (_, i) => ({
        name: `job-${i}`,
        version: 1,
        definition: {
          name: `job-${i}`,
          input: { 'http-poll': { url: `http://127.0.0.1:${port}/` } },
          output: { discard: {} },
        },
      })) as never;
    },
    post: async (path, options) => {
      // Reports of jobs the control plane has not deployed here would be refused: not the point.
      if (path === '/api/worker/events') return undefined as never;
      if (path !== '/api/worker/heartbeat') return api.post(path, options);
      const { jobs } = options!.body as { jobs: { name: string }[] };
      try {
        const answer = await api.post(path, options);
        largest = Math.max(largest, jobs.length);
        for (const job of jobs) sent.add(job.name);
        return answer as never;
      } catch (err) {
        refused++;
        throw err;
      }
    },
  });
  const worker = await startInProcessWorker(t, admin, 'many-jobs', { wrap: manyJobs });
  try {
    await worker.until(() => sent.size === JOBS || refused > 0, 30_000, 'every job state sent');
    expect(refused).toBe(0);
    expect(largest).toBeLessThanOrEqual(1_000);
  } finally {
    await worker.stop();
  }
}, 60_000);
