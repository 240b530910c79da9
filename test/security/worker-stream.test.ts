/**
 * Issue 16, item 19: the worker stream outlived its credential. `GET /api/worker/stream`
 * authenticated once and streamed for ever (it stayed open after the worker's key was
 * rotated), and took the worker's JWT as `?access_token=`, which lands in the load
 * balancer's and Cloud Run's request logs. The stream now opens with a single-use ticket
 * valid 30 s (`POST /api/worker/stream-ticket`), re-checks the credential at least every
 * 5 s and ends at the token's expiry.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authServices, type TokenClaims } from '../../functions/auth/services.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';
import { apiWorker, type Headers } from './worker-helpers.ts';

let t: TestApp;
let admin: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(() => t.close());

async function ticketFor(worker: Headers): Promise<string> {
  const res = await t.request('/api/worker/stream-ticket', { method: 'POST', headers: worker });
  expect(res.status).toBe(201);
  const body = await json(res);
  expect(body.ticket).not.toContain('.'); // not a JWT
  return body.ticket as string;
}

/** Reads the stream until it ends; resolves with all it said and when it ended. */
async function readToEnd(res: Response, limitMs: number): Promise<{ text: string; endedAt: number }> {
  const reader = res.body!.getReader();
  let text = '';
  const timer = setTimeout(() => void reader.cancel(), limitMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { text, endedAt: Date.now() };
      text += new TextDecoder().decode(value);
    }
  } finally {
    clearTimeout(timer);
  }
}

describe('the worker stream', () => {
  it('no longer takes a token in the URL', async () => {
    const worker = await apiWorker(t, admin, 'url-token');
    const token = worker.authorization!.slice('Bearer '.length);
    const res = await t.request(`/api/worker/stream?access_token=${token}`);
    expect(res.status).toBe(401);
    expect((await json(res)).error.code).toBe('unauthenticated');
  });

  it('opens with a ticket once; the same ticket a second time is refused', async () => {
    const worker = await apiWorker(t, admin, 'ticket-once');
    const ticket = await ticketFor(worker);
    const controller = new AbortController();
    const first = await t.request(`/api/worker/stream?ticket=${ticket}`, { signal: controller.signal });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const again = await t.request(`/api/worker/stream?ticket=${ticket}`);
    expect(again.status).toBe(401);
    expect((await json(again)).error.code).toBe('unauthenticated');
    controller.abort();
    // The client going away ends the stream on the server too (its loop would otherwise read
    // Firestore on after the app closed, an unhandled rejection inside the client library).
    await first.body?.cancel();
    expect((await t.request('/api/worker/stream?ticket=made-up-ticket')).status).toBe(401);
    expect((await t.request('/api/worker/stream')).status).toBe(401);
  });

  it('ends within 5 seconds after the worker key is rotated', async () => {
    const worker = await apiWorker(t, admin, 'rotated');
    const res = await t.request(`/api/worker/stream?ticket=${await ticketFor(worker)}`);
    expect(res.status).toBe(200);
    const reading = readToEnd(res, 20_000);
    const rotatedAt = Date.now();
    expect(
      (await t.request('/api/workers/rotated/rotate-key', { method: 'POST', headers: admin })).status,
    ).toBe(201);
    const { text, endedAt } = await reading;
    expect(text).toContain('event: end');
    expect(endedAt - rotatedAt).toBeLessThan(7_000);
  }, 30_000);

  it('ends when the token it was opened with expires', async () => {
    const worker = await apiWorker(t, admin, 'expiring');
    const claims = decodeJwt(worker.authorization!.slice('Bearer '.length)) as unknown as TokenClaims;
    const { token, expiresAt } = await authServices(t.deps).issue(
      { sub: claims.sub, kind: claims.kind, tenant: claims.tenant, roles: claims.roles, cred: claims.cred },
      3_000,
    );
    const res = await t.request(`/api/worker/stream?ticket=${await ticketFor(bearer(token))}`);
    expect(res.status).toBe(200);
    const { text, endedAt } = await readToEnd(res, 20_000);
    expect(text).toContain('event: end');
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt.getTime() - 50);
    expect(endedAt - expiresAt.getTime()).toBeLessThan(2_000);
  }, 30_000);

  it('is described in the OpenAPI document', async () => {
    const doc = await json(await t.request('/api/openapi.json'));
    expect(doc.paths['/api/worker/stream']?.get).toBeDefined();
    expect(doc.paths['/api/worker/stream-ticket']?.post).toBeDefined();
  });
});
