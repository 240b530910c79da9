/**
 * Pushes of one batch of notifications come at once, and the batch must request one run:
 * the rest find it requested. A push that read the job just before another push's request
 * used to read it again when it requested, see the job as the other left it, and publish a
 * second request (a second run taking a slot of its tenant and rendering the job, or, with
 * one runner, running again for nothing).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handleNotificationWake } from '../../functions/runs/wake.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { deployToCloud, wokenGcsYaml } from '../helpers/cloud-jobs.ts';
import { type NotifiedEnv, notifiedEnv } from '../helpers/notified-env.ts';

/** Run once, by the next request of runs, before it is made. */
const beforeRequest: { next?: () => Promise<unknown> } = {};
/** Every run request published. */
const published: RunRequest[] = [];
vi.mock('../../functions/runs/dispatch.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../functions/runs/dispatch.ts')>();
  return {
    ...original,
    requestRuns: async (...args: Parameters<typeof original.requestRuns>) => {
      const next = beforeRequest.next;
      if (next) {
        beforeRequest.next = undefined;
        await next();
      }
      const requests = await original.requestRuns(...args);
      published.push(...requests);
      return requests;
    },
  };
});

let env: NotifiedEnv;
beforeAll(async () => {
  env = await notifiedEnv('demo-wake-batch');
});
afterAll(async () => env.close());

describe('two pushes of one batch', () => {
  it('request one run: the one that decided first finds the other’s request and asks for nothing', async () => {
    const { t, admin } = env;
    const job = 'batched';
    await deployToCloud(t, admin, job, wokenGcsYaml(job, 'no-such-bucket', 'in/', 'no-such-subscription'));
    const db = await t.deps.clients.firestore();
    // As after its first run: idle, nothing requested, no lease.
    await db.doc(`tenants/default/jobs/${job}`).update('deployments.cloud.next_due_ms', null);
    published.length = 0;

    const wake = () => handleNotificationWake(t.deps, { tenant: 'default', job });
    let second: Awaited<ReturnType<typeof wake>> | undefined;
    // The first push has decided to request; the second comes and requests before it does.
    beforeRequest.next = async () => {
      second = await wake();
    };
    const first = await wake();

    expect(second).toEqual({ ack: true, decision: 'request' });
    expect(first).toEqual({ ack: true, decision: 'requested' });
    expect(published.filter((r) => r.job === job)).toHaveLength(1);
  }, 60_000);
});
