/**
 * Undeploy and render name workers; one that does not exist is a 404 naming it (a typo must
 * not look like a successful undeploy while the job keeps running), and an undeploy naming
 * it changes nothing on the others either. A worker that exists without the job, and the
 * built-in `cloud`, stay as they were: undeploy is idempotent, render answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.ts';
import { type ServedCli, servedCli } from '../helpers/cli.ts';
import { json, jsonInit } from '../helpers/http.ts';

let s: ServedCli;
let admin: Record<string, string>;
const YAML =
  'name: health\ninput:\n  http-poll:\n    url: https://example.org/status\noutput:\n  print: {}\n';

beforeAll(async () => {
  s = await servedCli();
  admin = bearer(s.env.SLUICE_TOKEN!);
  for (const id of ['w1', 'w2']) await s.t.request('/api/workers', jsonInit('POST', { id }, admin));
  await s.t.request('/api/jobs/health', {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: YAML,
  });
  const deployed = await post('health/deploy', { workers: ['w1'] });
  expect(deployed.status).toBe(200);
});
afterAll(() => s.close());

const post = (path: string, body: unknown = {}) =>
  s.t.request(`/api/jobs/${path}`, jsonInit('POST', body, admin));
const getJob = async () => json(await s.t.request('/api/jobs/health', { headers: admin }));
const render = (worker: string) =>
  s.t.request(`/api/jobs/health/render?worker=${worker}`, { headers: admin });

describe('undeploy naming a worker that does not exist', () => {
  it('is a 404 naming it, and leaves the deployment on the real worker as it was', async () => {
    const before = await getJob();
    expect(before.deployments.map((d: { worker: string }) => d.worker)).toEqual(['w1']);
    const res = await post('health/undeploy', { workers: ['w1', 'nope'] });
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body.error).toMatchObject({ code: 'not_found', message: 'unknown worker(s): nope' });
    expect(body.error.details).toEqual([{ path: 'workers', message: 'no worker nope' }]);
    expect(await getJob()).toEqual(before);
  });

  it('stays a 200 for a worker that exists but has no deployment of the job, and for cloud', async () => {
    for (const worker of ['w2', 'cloud']) {
      const res = await post('health/undeploy', { workers: [worker] });
      expect(res.status).toBe(200);
      expect((await json(res)).deployments.map((d: { worker: string }) => d.worker)).toEqual(['w1']);
    }
  });
});

describe('render for a worker that does not exist', () => {
  it('is a 404 naming it', async () => {
    const res = await render('nope');
    expect(res.status).toBe(404);
    expect((await json(res)).error).toMatchObject({ code: 'not_found', message: 'unknown worker: nope' });
  });

  it('still renders for a real worker and for cloud', async () => {
    for (const worker of ['w1', 'w2', 'cloud']) {
      const res = await render(worker);
      expect(res.status).toBe(200);
      expect((await json(res)).definition.input['http-poll'].url).toBe('https://example.org/status');
    }
  });
});

describe('the CLI', () => {
  it('exits 4 (not found) naming the worker for job undeploy -w nope, and undeploys nothing', async () => {
    const r = await s.run(['job', 'undeploy', 'health', '-w', 'nope']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('unknown worker(s): nope');
    expect((await getJob()).deployments.map((d: { worker: string }) => d.worker)).toEqual(['w1']);
  });

  it('exits 4 (not found) naming the worker for job render -w nope', async () => {
    const r = await s.run(['job', 'render', 'health', '-w', 'nope']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('unknown worker: nope');
  });
});
