/**
 * Issue 16, item 17: worker ids with a dot were read as nested Firestore field paths. A
 * worker `dot.w` got none of its jobs (the query asked for `deployments.dot.w.version`),
 * and its heartbeat wrote `deployments.dot.w`, giving worker `dot` a deployment it never
 * had. Field paths are now built with `FieldPath`, one segment per name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { apiWorker, deployJob, type Headers, storedDeployments } from './worker-helpers.ts';

let t: TestApp;
let admin: Headers;
let dotted: Headers;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  dotted = await apiWorker(t, admin, 'dot.w');
  await apiWorker(t, admin, 'dot');
  await deployJob(t, admin, 'dotted-job', ['dot.w']);
});
afterAll(() => t.close());

describe('a worker id with a dot', () => {
  it('gets the jobs deployed to it', async () => {
    const jobs = await json(await t.request('/api/worker/jobs', { headers: dotted }));
    expect(jobs.map((j: { name: string }) => j.name)).toEqual(['dotted-job']);
  });

  it('heartbeats its own deployment and creates none for the worker named by its prefix', async () => {
    const res = await t.request(
      '/api/worker/heartbeat',
      jsonInit('POST', { jobs: [{ name: 'dotted-job', state: 'running' }] }, dotted),
    );
    expect(res.status).toBe(204);
    const deployments = await storedDeployments(t, 'dotted-job');
    expect(Object.keys(deployments)).toEqual(['dot.w']);
    expect(deployments['dot.w']!.state).toBe('running');
    const dot = await json(await t.request('/api/workers/dot', { headers: admin }));
    expect(dot.jobs).toEqual([]);
  });
});
