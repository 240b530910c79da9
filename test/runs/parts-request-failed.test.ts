/**
 * A part whose request never reached the queue (Pub/Sub refused the publish, or the runner
 * died between counting the part in its run and requesting it). The part was counted first
 * and requested after: a failed publish gave the part up (`abandoned_parts`, its objects left
 * to the job's next run), and a runner that died in between left the run one part short of
 * ending until the parts' hold lapsed. Now the part is counted and parked in one write, and
 * requested; one whose request failed is sent by the tick from the park.
 */
import type { PubSub } from '@google-cloud/pubsub';
import { expect, it } from 'vitest';
import { jobCollection } from '../../functions/adapters/firestore-paths.ts';
import type { AppDeps } from '../../functions/app/deps.ts';
import { releaseParkedRuns } from '../../functions/runs/parked-runs.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { bucketOfOneLineObjects, cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

const OBJECTS = 30;
const SHARD = 10;

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

/**
 * The real client, except that the first publish of a part request fails as an unreachable
 * Pub/Sub would.
 */
function failingFirstPart(pubsub: PubSub): PubSub {
  let failed = false;
  return new Proxy(pubsub, {
    get(target, key, receiver) {
      if (key !== 'topic') return Reflect.get(target, key, receiver);
      return (...args: Parameters<PubSub['topic']>) => {
        const topic = target.topic(...args);
        return new Proxy(topic, {
          get(inner, name, innerReceiver) {
            if (name !== 'publishMessage') return Reflect.get(inner, name, innerReceiver);
            return (message: { json?: { reason?: string } }) => {
              if (message.json?.reason === 'part' && !failed) {
                failed = true;
                return Promise.reject(
                  Object.assign(new Error('14 UNAVAILABLE: no connection'), { code: 14 }),
                );
              }
              return inner.publishMessage(message as never);
            };
          },
        });
      };
    },
  });
}

it('a part whose request failed is requested by the tick: every object read in the run, none given up', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  const db = await t.deps.clients.firestore();
  await bucketOfOneLineObjects(gcs.url, 'unsent', OBJECTS);
  Object.assign(t.deps.config, { shardObjects: SHARD });
  const pubsub = failingFirstPart(await t.deps.clients.pubsub());
  const deps: AppDeps = { ...t.deps, clients: { ...t.deps.clients, pubsub: async () => pubsub } };
  const out = printed();
  const runners = await Promise.all(
    ['p1', 'p2'].map((owner) => startPullRunner(deps, { owner, concurrency: 2, print: out.output })),
  );
  const ended = async () =>
    (
      (await json(await t.request('/api/events?type=job-run-ended&job=unsent', { headers: admin })))
        .events as { payload: Record<string, unknown> }[]
    ).map((e) => e.payload);
  try {
    await deployToCloud(t, admin, 'unsent', cloudGcsYaml('unsent', 'unsent', 'in/'));
    // The tick: the failed part is parked, unclaimed, and sent from there.
    await until(
      async () => {
        await releaseParkedRuns(t.deps);
        return (await ended()).length > 0;
      },
      30_000,
      'the run ended',
    );
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
  }
  const objects = out.lines().map((line) => (JSON.parse(line) as { o: number }).o);
  expect(objects.toSorted((a, b) => a - b)).toEqual(Array.from({ length: OBJECTS }, (_, o) => o));
  const [run] = await ended();
  expect(run).toMatchObject({ parts: (OBJECTS - SHARD) / SHARD, fingerprinted: OBJECTS });
  expect(run?.abandoned_parts).toBeUndefined();
  expect((await jobCollection(db, 'default', 'unsent', 'runs').get()).size).toBe(0);
  expect((await db.collection('tenants/default/parked-runs').get()).size).toBe(0);
}, 60_000);
