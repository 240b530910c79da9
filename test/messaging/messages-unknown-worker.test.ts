/**
 * Review finding E: `POST /api/messages` to a worker that does not exist answered 201 and
 * the message went nowhere, where a deploy to it is refused. It is now a 404 naming the
 * worker, and nothing is recorded or sent: no event, no outbox entry, no publish.
 */
import { Topic } from '@google-cloud/pubsub';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { outboxCollection } from '../../functions/messaging/outbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let operator: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  operator = bearer(await tokenFor(t, { role: 'operator' }));
  expect((await t.request('/api/workers', jsonInit('POST', { id: 'mw1' }, admin))).status).toBe(201);
});
afterAll(() => {
  vi.restoreAllMocks();
  return t.close();
});

const send = (body: unknown) => t.request('/api/messages', jsonInit('POST', body, operator));

async function userEvents() {
  const res = await t.request('/api/events?type=user-generated,user-alert,user-notification&limit=1000', {
    headers: admin,
  });
  expect(res.status).toBe(200);
  return (await json(res)).events as { worker?: string; tags?: string[] }[];
}

async function outbox() {
  const db = await t.deps.clients.firestore();
  return (await outboxCollection(db, 'default').get()).docs.map((d) => d.id);
}

describe('POST /api/messages to a worker', () => {
  it('is a 404 naming a worker that does not exist, and records and sends nothing', async () => {
    const eventsBefore = await userEvents();
    const outboxBefore = await outbox();
    const publish = vi.spyOn(Topic.prototype, 'publishMessage');
    for (const type of ['user-generated', 'user-alert', 'user-notification']) {
      const res = await send({ type, worker: 'nosuchworker', tags: ['lost'], payload: { n: 1 } });
      expect(res.status, type).toBe(404);
      expect(await json(res), type).toEqual({
        error: {
          code: 'not_found',
          message: 'unknown worker: nosuchworker',
          details: [{ path: 'worker', message: 'no worker nosuchworker' }],
        },
      });
    }
    expect(publish).not.toHaveBeenCalled();
    publish.mockRestore();
    expect(await userEvents()).toEqual(eventsBefore);
    expect(await outbox()).toEqual(outboxBefore);
  });

  it('is sent to a worker that exists, to the built-in cloud worker, and to every worker', async () => {
    const publish = vi.spyOn(Topic.prototype, 'publishMessage');
    for (const body of [{ worker: 'mw1' }, { worker: 'cloud' }, {}]) {
      const res = await send({ ...body, tags: ['found'] });
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect((await json(res)).id).toEqual(expect.any(String));
    }
    // The spy above sees a publish: its silence for an unknown worker means something.
    expect(publish).toHaveBeenCalledTimes(3);
    publish.mockRestore();
    const found = (await userEvents()).filter((e) => e.tags?.includes('found'));
    expect(found.map((e) => e.worker)).toEqual(['mw1', 'cloud', undefined]);
  });

  it('refuses a deleted worker like one that never existed', async () => {
    expect((await t.request('/api/workers/mw1', { method: 'DELETE', headers: admin })).status).toBe(204);
    const res = await send({ worker: 'mw1', tags: ['late'] });
    expect(res.status).toBe(404);
    expect((await json(res)).error.message).toBe('unknown worker: mw1');
    expect((await userEvents()).filter((e) => e.tags?.includes('late'))).toEqual([]);
  });
});
