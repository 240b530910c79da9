/**
 * Issue 16, item 4: a worker wrote any event kind. `POST /api/worker/events` took
 * `context-changed`, `worker-removed`, and job telemetry for jobs deployed elsewhere, so a
 * worker could forge the server's record and other workers' job history. A worker reports
 * `job-*` telemetry only for jobs deployed to it and `worker-*` kinds only about itself;
 * anything else is 403 and nothing of the batch is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { apiWorker, deployJob, events, type Headers } from './worker-helpers.ts';

let t: TestApp;
let admin: Headers;
let mallory: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  mallory = await apiWorker(t, admin, 'mallory');
  await apiWorker(t, admin, 'honest');
  await deployJob(t, admin, 'mine', ['mallory']);
  await deployJob(t, admin, 'theirs', ['honest']);
});
afterAll(() => t.close());

const post = (body: unknown) => t.request('/api/worker/events', jsonInit('POST', body, mallory));

async function refusedWithNothingWritten(batch: unknown[], marker: string) {
  const res = await post({ events: batch });
  expect(res.status).toBe(403);
  expect((await json(res)).error.code).toBe('forbidden');
  const written = await events(t, admin, 'limit=1000');
  expect(written.filter((e) => JSON.stringify(e.payload).includes(marker))).toEqual([]);
}

describe('worker telemetry kinds', () => {
  it('refuses server kinds such as context-changed and worker-removed, and writes nothing of the batch', async () => {
    for (const type of [
      'context-changed',
      'worker-removed',
      'job-deployed',
      'user-alert',
      'worker-created',
    ]) {
      const marker = `forged-${type}`;
      await refusedWithNothingWritten(
        [
          { type: 'job-metrics', job: 'mine', payload: { marker } },
          { type, payload: { marker } },
        ],
        marker,
      );
    }
  });

  it('refuses job telemetry for a job deployed to another worker, or with no job', async () => {
    await refusedWithNothingWritten(
      [
        { type: 'job-metrics', job: 'mine', payload: { marker: 'm1' } },
        { type: 'job-errors', job: 'theirs', payload: { marker: 'm1' } },
      ],
      'm1',
    );
    await refusedWithNothingWritten(
      [{ type: 'job-errors', job: 'no-such-job', payload: { marker: 'm2' } }],
      'm2',
    );
    await refusedWithNothingWritten([{ type: 'job-errors', payload: { marker: 'm3' } }], 'm3');
  });

  it('takes job telemetry of its own jobs and worker kinds about itself', async () => {
    const res = await post({
      events: [
        { type: 'job-run-started', job: 'mine', payload: { ok: 'k1' } },
        { type: 'job-errors', job: 'mine', payload: { ok: 'k1' } },
        { type: 'worker-logs', payload: { ok: 'k1' } },
      ],
    });
    expect(res.status).toBe(202);
    const written = (await events(t, admin, 'worker=mallory&limit=1000')).filter(
      (e) => e.payload.ok === 'k1',
    );
    expect(written.map((e) => [e.type, e.job, e.worker])).toEqual([
      ['job-run-started', 'mine', 'mallory'],
      ['job-errors', 'mine', 'mallory'],
      ['worker-logs', undefined, 'mallory'],
    ]);
  });
});
