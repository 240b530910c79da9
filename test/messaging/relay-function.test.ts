/**
 * The cloud's event relay (the `event-relay` function Eventarc calls per new event
 * document): called as Eventarc calls it, it sends the event to the worker whose message
 * trigger matches, with the event's true type and source, and to no other.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventDocumentOf, relayFunction } from '../../functions/entry/relay-function.ts';
import { routeEvents } from '../../functions/messaging/event-relay.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { apiWorker, deployJob } from '../security/worker-helpers.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

/** Calls the handler as Eventarc's push does: headers only matter, the body is protobuf. */
async function callRelay(headers: Record<string, string>): Promise<number> {
  let status = 0;
  const res = {
    writeHead(code: number) {
      status = code;
      return res;
    },
    end() {},
  } as unknown as ServerResponse;
  await relayFunction(t.deps)({ headers } as IncomingMessage, res);
  return status;
}

const messagesOf = async (worker: Record<string, string>) =>
  (await json(await t.request('/api/worker/messages?wait=1s', { headers: worker }))).messages as {
    type: string;
    source: string;
    worker?: string;
  }[];

describe('the event-relay function', () => {
  it('reads the event document Eventarc names and sends it to the workers that listen for it', async () => {
    const listener = await apiWorker(t, admin, 'relay-listener');
    const bystander = await apiWorker(t, admin, 'relay-bystander');
    await deployJob(
      t,
      admin,
      'on-new-workers',
      ['relay-listener'],
      'name: on-new-workers\ninput:\n  http-poll:\n    url: http://example.com\n    trigger:\n      message:\n        filter-type: [worker-created]\noutput:\n  print: {}\n',
    );
    // Both workers drain what deploying sent them.
    await messagesOf(listener);
    await messagesOf(bystander);

    await t.request('/api/workers', jsonInit('POST', { id: 'relay-new' }, admin));
    const created = await json(
      await t.request('/api/events?type=worker-created&worker=relay-new', { headers: admin }),
    );
    const id = created.events[0].id as string;
    expect(await callRelay({ 'ce-document': `tenants/default/events/${id}` })).toBe(204);

    expect(await messagesOf(listener)).toEqual([
      expect.objectContaining({ id, type: 'worker-created', source: 'server', worker: 'relay-new' }),
    ]);
    // The bystander gets the next message sent to every worker, and not the relayed one before it.
    await t.request('/api/messages', jsonInit('POST', { tags: ['after'] }, admin));
    expect((await messagesOf(bystander)).map((m) => m.type)).toEqual(['user-generated']);
  });

  it('stops routing to a worker once it is deleted', async () => {
    const created = await json(
      await t.request('/api/events?type=worker-created&worker=relay-new', { headers: admin }),
    );
    const db = await t.deps.clients.firestore();
    expect((await routeEvents(db, 'default', created.events)).map((r) => r.workers)).toEqual([
      ['relay-listener'],
    ]);
    // The same event in another tenant's log reaches none of this tenant's workers.
    expect(await routeEvents(db, 'another-tenant', created.events)).toEqual([]);
    expect(
      (await t.request('/api/workers/relay-listener', { method: 'DELETE', headers: admin })).status,
    ).toBe(204);
    expect(await routeEvents(db, 'default', created.events)).toEqual([]);
  });

  it('takes the document from ce-document or ce-subject, and ignores anything that is not an event', async () => {
    expect(eventDocumentOf({ 'ce-subject': 'documents/tenants/acme/events/2026-x' })).toEqual({
      tenant: 'acme',
      id: '2026-x',
    });
    expect(eventDocumentOf({ 'ce-document': 'tenants/acme/jobs/x' })).toBeUndefined();
    expect(await callRelay({ 'ce-document': 'tenants/acme/jobs/x' })).toBe(204);
  });
});
