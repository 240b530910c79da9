/**
 * A worker runtime sends one heartbeat at a time. It sent one every `heartbeatMs` whether or
 * not the last had been answered: against a slow control plane they overlapped, contended for
 * the worker's documents in Firestore (the emulator held them up to its lock timeout, and a
 * deploy to that worker failed with a 500 meanwhile), and a slow one could land after a newer
 * one and record older states.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkerApi } from '../../functions/runner/worker-runtime.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { startInProcessWorker } from '../helpers/in-process-worker.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

it('waits for a heartbeat to be answered before it sends the next', async () => {
  let open = 0;
  let mostOpen = 0;
  let answered = 0;
  /** Heartbeats held back: awaited before the app closes (one may still be waiting then). */
  const held = new Set<Promise<unknown>>();
  // A control plane that takes a second to answer a heartbeat (the runtime beats every 300 ms).
  const slowHeartbeats = (api: WorkerApi): WorkerApi => ({
    get: (path, options) => api.get(path, options),
    post: (path, options) => {
      if (path !== '/api/worker/heartbeat') return api.post(path, options);
      mostOpen = Math.max(mostOpen, ++open);
      const answer = (async () => {
        try {
          await new Promise((r) => setTimeout(r, 1_000));
          return await api.post(path, options);
        } finally {
          open--;
          answered++;
        }
      })();
      held.add(answer);
      void answer.finally(() => held.delete(answer)).catch(() => {});
      return answer as never;
    },
  });
  const worker = await startInProcessWorker(t, admin, 'slow-beats', { wrap: slowHeartbeats });
  try {
    await worker.until(() => answered >= 4, 20_000, 'four heartbeats answered');
    expect(mostOpen).toBe(1);
    expect(worker.log.filter((line) => line.startsWith('heartbeat failed'))).toEqual([]);
  } finally {
    await worker.stop();
    await Promise.allSettled([...held]);
  }
}, 60_000);
