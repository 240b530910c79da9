import type { Message, Subscription } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainOutbox } from '../../functions/messaging/outbox.ts';
import {
  ensureWorkerSubscription,
  isForWorker,
  workerSubscriptionName,
} from '../../functions/messaging/worker-channel.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
const received: Record<string, { attributes: Record<string, string>; body: Record<string, unknown> }[]> = {
  w1: [],
  w2: [],
};
const subscriptions: Subscription[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const pubsub = await t.deps.clients.pubsub();
  for (const worker of ['w1', 'w2']) {
    await ensureWorkerSubscription(pubsub, 'default', worker);
    const subscription = pubsub.subscription(workerSubscriptionName('default', worker));
    subscription.on('message', (message: Message) => {
      message.ack();
      // The emulator ignores subscription filters: readers check the attributes themselves.
      if (isForWorker(message.attributes, 'default', worker)) {
        received[worker]!.push({ attributes: message.attributes, body: JSON.parse(message.data.toString()) });
      }
    });
    subscriptions.push(subscription);
  }
});
afterAll(async () => {
  await Promise.all(subscriptions.map((s) => s.close()));
  await t.close();
});

const hasMarkerIn = (body: Record<string, unknown>) =>
  (body.payload as { context?: { marker?: number } }).context?.marker === 1;

async function until(check: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

const post = (path: string, body: unknown) =>
  t.request(`/api/contexts/${path}`, jsonInit('POST', body, admin));

describe('context fan-out', () => {
  it('sends a global change to every worker, a worker change to that worker only, a job change to no one', async () => {
    await post('update-global', { region: 'eu' });
    await post('update-worker-map/w1', { pinned: true });
    await post('update-job-map/some-job', { quiet: true });
    // The proof that the job change reached no one: a global change made after it has
    // reached both workers, so a message for the job change had its chance to arrive first.
    await post('update-global', { region: 'eu', marker: 1 });
    const hasMarker = (worker: string) => received[worker]!.some((m) => hasMarkerIn(m.body));
    await until(
      () => hasMarker('w1') && hasMarker('w2') && received.w1!.length >= 3 && received.w2!.length >= 2,
    );

    const scopes = (worker: string) =>
      received[worker]!.filter((m) => !hasMarkerIn(m.body)).map(
        (m) => (m.body.payload as { scope: string }).scope,
      );
    expect(scopes('w1').sort()).toEqual(['global', 'worker']);
    expect(scopes('w2')).toEqual(['global']);

    const global = received.w2![0]!.body;
    expect(global).toMatchObject({
      type: 'context-changed',
      kind: 'system',
      source: 'server',
      payload: { scope: 'global', context: { region: 'eu' } },
    });
    const pinned = received.w1!.find((m) => (m.body.payload as { scope: string }).scope === 'worker')!.body;
    expect(pinned.payload).toMatchObject({
      scope: 'worker',
      worker: 'w1',
      context: { pinned: true },
      version: 1,
    });
  });

  it('carries increasing versions', async () => {
    received.w2!.length = 0;
    await post('update-global', { n: 1 });
    await post('update-global', { n: 2 });
    // Pub/Sub may deliver the two messages in either order: each carries its change.
    const versionOf = (n: number) =>
      received.w2!.find((m) => (m.body.payload as { context: { n?: number } }).context.n === n)?.body
        .payload as { version: number } | undefined;
    await until(() => versionOf(1) !== undefined && versionOf(2) !== undefined);
    expect(versionOf(2)!.version).toBeGreaterThan(versionOf(1)!.version);
  });

  it('records a context-changed event for every change, job scope included', async () => {
    const db = await t.deps.clients.firestore();
    const events = await db
      .collection('tenants')
      .doc('default')
      .collection('events')
      .where('type', '==', 'context-changed')
      .get();
    const scopes = events.docs.map((d) => d.get('payload.scope'));
    expect(scopes).toEqual(expect.arrayContaining(['global', 'worker', 'job']));
  });

  it('keeps the notification in the outbox when publishing fails, and delivers it later', async () => {
    received.w2!.length = 0;
    const pubsub = await t.deps.clients.pubsub();
    const publishFailing = () => Promise.reject(new Error('pubsub is down'));
    const realTopic = pubsub.topic.bind(pubsub);
    pubsub.topic = ((name: string) => {
      const tpc = realTopic(name);
      tpc.publishMessage = publishFailing as never;
      return tpc;
    }) as never;
    try {
      const res = await post('update-global', { during_outage: true });
      expect(res.status).toBe(200);
    } finally {
      pubsub.topic = realTopic;
    }
    const db = await t.deps.clients.firestore();
    expect((await db.collection('tenants').doc('default').collection('outbox').get()).size).toBe(1);
    await new Promise((r) => setTimeout(r, 5_100));
    expect(await drainOutbox(t.deps)).toBe(1);
    await until(() =>
      received.w2!.some(
        (m) => (m.body.payload as { context: Record<string, unknown> }).context.during_outage === true,
      ),
    );
    expect(
      received.w2!.some(
        (m) => (m.body.payload as { context: Record<string, unknown> }).context.during_outage === true,
      ),
    ).toBe(true);
    expect((await db.collection('tenants').doc('default').collection('outbox').get()).size).toBe(0);
  }, 20_000);

  it('answers the whole map even when publishing fails', async () => {
    expect((await json(await t.request('/api/contexts/global', { headers: admin }))).during_outage).toBe(
      true,
    );
  });
});
