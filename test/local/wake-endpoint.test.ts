/**
 * The local stack's wake endpoint (local/wake-endpoint.ts): the Pub/Sub emulator pushes a
 * bucket's notifications to it, as it pushes them to the runner function in the cloud, and
 * a trigger-less job on the `cloud` worker wakes and reads them. It serves `/wake` only:
 * anything else, a run request's push included, is 404 and requests nothing.
 */
import { randomUUID } from 'node:crypto';
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpBucketNotifications } from '../../cli/gcs-notify.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import { startWakeEndpoint, type WakeEndpoint, wakePort } from '../../local/wake-endpoint.ts';
import type { TestApp } from '../helpers/app.ts';
import { cloudGcsYaml, deployToCloud, wokenGcsYaml } from '../helpers/cloud-jobs.ts';
import { type NotifiedEnv, notifiedEnv } from '../helpers/notified-env.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

const PROJECT = 'demo-local-wake';
let env: NotifiedEnv;
let t: TestApp;
let admin: Record<string, string>;
let storage: Storage;
let pubsub: PubSub;
let endpoint: WakeEndpoint;

beforeAll(async () => {
  env = await notifiedEnv(PROJECT);
  ({ t, admin, storage, pubsub } = env);
  endpoint = await startWakeEndpoint(t.deps, '127.0.0.1', 0);
});
afterAll(async () => {
  await endpoint.stop();
  await env.close();
});

describe('the local wake endpoint', () => {
  it('wakes a trigger-less job on the cloud worker with the notifications the emulator pushes', async () => {
    const bucket = `local-wake-${randomUUID().slice(0, 8)}`;
    await storage.createBucket(bucket);
    const { subscription } = await setUpBucketNotifications(
      {
        bucket,
        name: `sluice-gcs-woken-${randomUUID().slice(0, 6)}`,
        project: PROJECT,
        wake: { runnerUrl: endpoint.url, tenant: 'default', job: 'woken' },
      },
      { storage, pubsub },
    );
    const out = printed();
    const runner = await startPullRunner(t.deps, {
      owner: 'local-wake-runner',
      concurrency: 1,
      print: out.output,
    });
    const objects = () => out.lines().map((line) => (JSON.parse(line) as { object: string }).object);
    try {
      await deployToCloud(t, admin, 'woken', wokenGcsYaml('woken', bucket, 'in/', subscription));
      // The first run lists the (empty) bucket and ends; only a wake brings the next.
      await runner.idle(500);
      await storage.bucket(bucket).file('in/new.json').save('{"v":1}\n', { resumable: false });
      await until(() => objects().includes('in/new.json'), 30_000, 'the new object printed');
      expect(objects()).toEqual(['in/new.json']);
    } finally {
      await runner.stop();
    }
  }, 60_000);

  it('serves /wake only: other paths and methods are 404, and a run request pushed to it runs nothing', async () => {
    const db = await t.deps.clients.firestore();
    await deployToCloud(t, admin, 'plain', cloudGcsYaml('plain', 'no-bucket', 'x/'));
    const nextDue = async () =>
      (await db.doc('tenants/default/jobs/plain').get()).get('deployments.cloud.next_due_ms');
    const before = await nextDue();
    const runRequest = Buffer.from(
      JSON.stringify({
        tenant: 'default',
        job: 'plain',
        version: 1,
        requested_ms: Date.now(),
        reason: 'due',
      }),
    ).toString('base64');
    for (const [method, path] of [
      ['POST', '/'],
      ['POST', '/runs'],
      ['GET', '/wake?tenant=default&job=plain'],
    ] as const) {
      const response = await fetch(`${endpoint.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: JSON.stringify({ message: { data: runRequest } }) } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    // A wake for a job that notifications do not wake: done with (204), nothing requested.
    const wake = await fetch(`${endpoint.url}/wake?tenant=default&job=plain`, {
      method: 'POST',
      body: JSON.stringify({ message: { data: '' } }),
    });
    expect(wake.status).toBe(204);
    expect(await nextDue()).toBe(before);
  });

  it('says which setting to change when its port is taken', async () => {
    const taken = Number(new URL(endpoint.url).port);
    await expect(startWakeEndpoint(t.deps, '127.0.0.1', taken)).rejects.toThrow(
      `port ${taken} on 127.0.0.1 is in use (the wake endpoint for notified jobs): set SLUICE_WAKE_PORT`,
    );
  });

  it('takes its port from SLUICE_WAKE_PORT for npm start: 8444 unless set, and refuses what is not a port', () => {
    expect(wakePort({})).toBe(8444);
    expect(wakePort({ SLUICE_WAKE_PORT: '0' })).toBe(0);
    expect(wakePort({ SLUICE_WAKE_PORT: '9000' })).toBe(9000);
    for (const bad of ['x', '-1', '65536', '80 80'])
      expect(() => wakePort({ SLUICE_WAKE_PORT: bad }), bad).toThrow(
        /SLUICE_WAKE_PORT must be a port number/,
      );
  });
});
