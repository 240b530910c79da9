/**
 * Bad input is a 400 with the contract's error body, never a 500, and changes nothing.
 * JSON bodies nested thousands of levels deep overflowed the stack of the recursive walks
 * behind the routes (shared/context/map.ts `depthOf`, the job validator); a message payload
 * nested past Firestore's 20 levels, or holding an array in an array, failed in Firestore;
 * an ack id that is not one of the worker's failed in Pub/Sub. Each was a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../functions/app/middleware/body-rules.ts';
import { MAX_PAYLOAD_DEPTH } from '../../functions/messages/payload.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';
import { apiWorker, deployJob, events, type Headers } from './worker-helpers.ts';

let t: TestApp;
let admin: Headers;
let worker: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  worker = await apiWorker(t, admin, 'deep-w1');
  await deployJob(t, admin, 'deep-job', ['deep-w1']);
});
afterAll(() => t.close());

/** `[[[...1...]]]`, `levels` arrays deep. */
const arrays = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
/** `{"a":{"a":...1...}}`, `levels` objects deep. */
const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

function send(method: string, path: string, body: string, headers: Headers = admin) {
  return t.request(path, { method, headers: { ...headers, 'content-type': 'application/json' }, body });
}

/** A 400 with the contract's error body (no internals), returning it. */
async function expectInvalid(res: Response) {
  const body = await json(res);
  expect({ status: res.status, code: body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
  expect(body.error.message).toEqual(expect.any(String));
  expect(body.error.message).not.toMatch(/stack|INVALID_ARGUMENT|Firestore document|subscriptions\//);
  return body.error as { message: string; details?: { path: string; message: string }[] };
}

const DEEP = `objects and arrays may nest at most ${MAX_JSON_DEPTH} levels deep`;

/** The server never fell over: nothing reached the error handler as an unhandled error. */
function expectNoInternalErrors() {
  expect(t.logs()).not.toContain('unhandled error');
  expect(t.logs()).not.toContain('Maximum call stack size exceeded');
}

describe('a JSON body nested too deep', () => {
  it('is a 400 on POST /api/contexts/update-global at 5,000 and 200,000 levels, and the context stays as it was', async () => {
    expect((await send('POST', '/api/contexts/update-global', '{"keep":"yes"}')).status).toBe(200);
    const before = await json(await t.request('/api/contexts/global', { headers: admin }));
    const changes = (await events(t, admin, 'type=context-changed')).length;
    for (const body of [
      `{"k":${arrays(5_000)}}`,
      `{"k":${arrays(200_000)}}`,
      `{"k":${objects(100_000)}}`,
      `{"keep":null,"k":${arrays(MAX_JSON_DEPTH)}}`,
    ]) {
      const error = await expectInvalid(await send('POST', '/api/contexts/update-global', body));
      expect(error.details).toEqual([{ path: '', message: DEEP }]);
    }
    // At 1,000 levels it was already a 400 (the context's own limit), before the edge's.
    await expectInvalid(await send('POST', '/api/contexts/update-global', `{"k":${arrays(1_000)}}`));
    expect(await json(await t.request('/api/contexts/global', { headers: admin }))).toEqual(before);
    expect(await events(t, admin, 'type=context-changed')).toHaveLength(changes);
    expectNoInternalErrors();
  });

  it('is counted on structure, not on brackets inside strings, and the limit is exact', async () => {
    const text = `"${'['.repeat(100_000)}\\"{{${'{'.repeat(1_000)}"`;
    const res = await send('POST', '/api/contexts/update-global', `{"text":${text}}`);
    expect(res.status).toBe(200);
    expect((await json(res)).context.text).toBe(JSON.parse(text));
    // The body at the limit reaches the route, which applies its own rule (values nest at most 32).
    const import64 = `{"format":"sluice-context/v1","global":{"k":${arrays(MAX_JSON_DEPTH - 2)}}}`;
    const error = await expectInvalid(await send('POST', '/api/contexts/import', import64));
    expect(error.message).toContain('at most 32 levels');
    const import65 = `{"format":"sluice-context/v1","global":{"k":${arrays(MAX_JSON_DEPTH - 1)}}}`;
    expect((await expectInvalid(await send('POST', '/api/contexts/import', import65))).details).toEqual([
      { path: '', message: DEEP },
    ]);
    expect((await json(await t.request('/api/contexts/global', { headers: admin }))).text).toBe(
      JSON.parse(text),
    );
  });

  it('is a 400 on PUT /api/jobs/{name} with headers 100,000 levels deep, and no job is saved', async () => {
    const job = (headers: string) =>
      `{"name":"deep","input":{"http-poll":{"url":"http://example.com","headers":{"x":${headers}}}},"output":{"print":{}}}`;
    for (const headers of [objects(100_000), arrays(100_000)]) {
      const error = await expectInvalid(await send('PUT', '/api/jobs/deep', job(headers)));
      expect(error.details).toEqual([{ path: '', message: DEEP }]);
    }
    expect((await t.request('/api/jobs/deep', { headers: admin })).status).toBe(404);
    expectNoInternalErrors();
  });
});

describe('a message payload Firestore cannot store', () => {
  const message = (tag: string, payload: string) =>
    send('POST', '/api/messages', `{"tags":["${tag}"],"worker":"deep-w1","payload":${payload}}`);

  it(`is a 400 past ${MAX_PAYLOAD_DEPTH} levels or with an array in an array, and is neither logged nor delivered`, async () => {
    const tooDeep = await expectInvalid(await message('too-deep', objects(MAX_PAYLOAD_DEPTH + 1)));
    expect(tooDeep.details).toEqual([
      {
        path: `payload${'.a'.repeat(MAX_PAYLOAD_DEPTH)}`,
        message: `objects and arrays may nest at most ${MAX_PAYLOAD_DEPTH} levels deep`,
      },
    ]);
    expect(tooDeep.message).toContain(`at most ${MAX_PAYLOAD_DEPTH} levels`);
    await expectInvalid(await message('deeper', objects(40)));
    await expectInvalid(await message('deepest', objects(100_000)));
    const nested = await expectInvalid(await message('arrays', '{"rows":[[1,2],[3,4]]}'));
    expect(nested.details?.[0]?.path).toMatch(/^payload\.rows\.[01]$/);
    await expectInvalid(await message('deep-arrays', `{"a":${arrays(19)}}`));
    // Keys Firestore refuses, and a payload over its document size (8 bytes a number).
    for (const [tag, payload] of [
      ['empty-key', '{"a":{"":1}}'],
      ['reserved-key', '{"a":{"__name__":1}}'],
      ['long-key', `{"${'k'.repeat(1_600)}":1}`],
      ['numbers', `{"n":[${new Array(450_000).fill(1).join(',')}]}`],
    ] as const)
      await expectInvalid(await message(tag, payload));
    // The deepest payload Firestore stores is accepted.
    const ok = await message('at-limit', objects(MAX_PAYLOAD_DEPTH));
    expect(ok.status).toBe(201);
    const logged = await events(t, admin, 'type=user-generated');
    expect(logged.map((e) => (e as { tags?: string[] }).tags)).toEqual([['at-limit']]);
    const { messages } = await json(await t.request('/api/worker/messages?wait=3s', { headers: worker }));
    expect(
      messages
        .filter((m: { type: string }) => m.type === 'user-generated')
        .map((m: { tags: string[] }) => m.tags),
    ).toEqual([['at-limit']]);
    expectNoInternalErrors();
  }, 30_000);

  it('is a 400 in a worker report too, and nothing of the batch is written', async () => {
    const report = (payload: string) =>
      send(
        'POST',
        '/api/worker/events',
        `{"events":[{"type":"job-logs","job":"deep-job","payload":{"n":1}},{"type":"job-logs","job":"deep-job","payload":${payload}}]}`,
        worker,
      );
    await expectInvalid(await report(objects(MAX_PAYLOAD_DEPTH + 1)));
    await expectInvalid(await report('{"rows":[[1]]}'));
    expect(await events(t, admin, 'type=job-logs')).toEqual([]);
    expectNoInternalErrors();
  });
});

describe('acknowledging messages', () => {
  it('is a 400 for an ack id that is malformed or of another subscription', async () => {
    for (const id of ['projects/x/subscriptions/y:1', 'garbage']) {
      const res = await send('POST', '/api/worker/messages/ack', JSON.stringify({ ack_ids: [id] }), worker);
      expect((await expectInvalid(res)).details?.[0]?.path).toBe('ack_ids');
    }
    expectNoInternalErrors();
  });

  it('still acknowledges the worker’s own messages', async () => {
    await send('POST', '/api/messages', '{"tags":["ack-me"],"worker":"deep-w1"}');
    const { messages } = await json(await t.request('/api/worker/messages?wait=5s', { headers: worker }));
    const mine = messages.filter((m: { tags?: string[] }) => m.tags?.includes('ack-me'));
    expect(mine).toHaveLength(1);
    const ack = () =>
      send('POST', '/api/worker/messages/ack', JSON.stringify({ ack_ids: [mine[0].ack_id] }), worker);
    expect((await ack()).status).toBe(204);
    // Acknowledging again is harmless.
    expect((await ack()).status).toBe(204);
  }, 30_000);
});
