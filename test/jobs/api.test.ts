import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  for (const id of ['w1', 'w2', 'w3']) await t.request('/api/workers', jsonInit('POST', { id }, admin));
});
afterAll(() => t.close());

const YAML = `# polls the status page
name: poller
context:
  interval: 10m
input:
  http-poll:
    url: 'https://{{host}}/status'   # host comes from context
    json: true
    trigger:
      interval:
        duration: '{{interval}}'
output:
  print: {}
`;

const putYaml = (name: string, text: string, headers = admin) =>
  t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body: text,
  });
const post = (path: string, body: unknown = {}) =>
  t.request(`/api/jobs/${path}`, jsonInit('POST', body, admin));
const ctx = (path: string, body: unknown) =>
  t.request(`/api/contexts/${path}`, jsonInit('POST', body, admin));

describe('saving jobs', () => {
  it('creates from YAML (201), updates (200) with a new version, and keeps the YAML as written', async () => {
    const created = await putYaml('poller', YAML);
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ name: 'poller', version: 1, definition: { name: 'poller' } });
    const updated = await putYaml('poller', YAML);
    expect(updated.status).toBe(200);
    expect((await json(updated)).version).toBe(2);
    const yaml = await t.request('/api/jobs/poller', { headers: { ...admin, accept: 'application/yaml' } });
    expect(yaml.headers.get('content-type')).toContain('application/yaml');
    expect(await yaml.text()).toBe(YAML);
  });

  it('creates from JSON', async () => {
    const definition = {
      name: 'json-job',
      input: { 'http-poll': { url: 'http://example.com' } },
      output: { print: {} },
    };
    const res = await t.request('/api/jobs/json-job', jsonInit('PUT', definition, admin));
    expect(res.status).toBe(201);
    const listed = await json(await t.request('/api/jobs', { headers: admin }));
    expect(listed.map((j: { name: string }) => j.name)).toContain('json-job');
  });

  it('refuses invalid definitions with positions, and changes nothing', async () => {
    const res = await putYaml(
      'broken',
      'name: broken\ninput:\n  http-poll:\n    url: ftp://x\noutput:\n  print: {}\n',
    );
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.details[0]).toMatchObject({ path: 'input.http-poll.url', line: 4, column: 10 });
    expect((await t.request('/api/jobs/broken', { headers: admin })).status).toBe(404);
    const mismatch = await putYaml('other-name', YAML);
    expect(mismatch.status).toBe(400);
    const wrongType = await t.request('/api/jobs/x', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(wrongType.status).toBe(415);
  });

  it('lets viewers read and refuses their writes', async () => {
    const viewer = bearer(await tokenFor(t, { role: 'viewer' }));
    expect((await t.request('/api/jobs', { headers: viewer })).status).toBe(200);
    expect((await putYaml('poller', YAML, viewer)).status).toBe(403);
  });
});

describe('deploying', () => {
  it('refuses a deploy when one worker lacks a context key, naming key and worker, and deploys nothing', async () => {
    await ctx('update-worker-map/w1', { host: 'one.example.com' });
    await ctx('update-worker-map/w2', { host: 'two.example.com' });
    const res = await post('poller/deploy', { workers: ['w1', 'w2', 'w3'] });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.details).toEqual([
      { path: 'input.http-poll.url', message: 'worker w3: missing context key `host`' },
    ]);
    const job = await json(await t.request('/api/jobs/poller', { headers: admin }));
    expect(job.deployments).toEqual([]);
    expect(job.state).toBe('saved');
  });

  it('deploys to every worker when all render, renders per worker, and serves the worker its job', async () => {
    await ctx('update-global', { host: 'global.example.com' });
    const res = await post('poller/deploy', { workers: ['w1', 'w3'] });
    expect(res.status).toBe(200);
    expect(
      (await json(res)).deployments.map((d: { worker: string; state: string }) => [d.worker, d.state]),
    ).toEqual([
      ['w1', 'pending'],
      ['w3', 'pending'],
    ]);
    const rendered = await json(await t.request('/api/jobs/poller/render?worker=w1', { headers: admin }));
    expect(rendered.definition.input['http-poll']).toMatchObject({
      url: 'https://one.example.com/status',
      trigger: { interval: { duration: '10m' } },
    });
    expect(rendered.sources).toMatchObject({ host: 'worker', interval: 'definition' });

    const created = await json(
      await t.request('/api/workers/w3/rotate-key', { method: 'POST', headers: admin }),
    );
    const w3 = bearer(await apiKeyToken(t, created.key));
    const jobs = await json(await t.request('/api/worker/jobs', { headers: w3 }));
    expect(jobs).toEqual([
      { name: 'poller', version: 2, definition: expect.objectContaining({ name: 'poller' }) },
    ]);
    expect(jobs[0].definition.input['http-poll'].url).toBe('https://global.example.com/status');
  });

  it('applies a job-context change only after stage', async () => {
    await ctx('update-job-map/poller', { interval: '1m' });
    const before = await json(await t.request('/api/jobs/poller/render?worker=w1', { headers: admin }));
    expect(before.definition.input['http-poll'].trigger.interval.duration).toBe('10m');
    const staged = await post('poller/stage');
    expect(await json(staged)).toEqual({ staged_version: 2 });
    const after = await json(await t.request('/api/jobs/poller/render?worker=w1', { headers: admin }));
    expect(after.definition.input['http-poll'].trigger.interval.duration).toBe('1m');
  });

  it('refuses to delete a deployed job, undeploys, then deletes', async () => {
    expect((await t.request('/api/jobs/poller', { method: 'DELETE', headers: admin })).status).toBe(409);
    const partial = await json(await post('poller/undeploy', { workers: ['w1'] }));
    expect(partial.deployments.map((d: { worker: string }) => d.worker)).toEqual(['w3']);
    expect((await json(await post('poller/undeploy'))).deployments).toEqual([]);
    expect((await t.request('/api/jobs/poller', { method: 'DELETE', headers: admin })).status).toBe(204);
    expect((await t.request('/api/jobs/poller', { headers: admin })).status).toBe(404);
  });

  it('refuses message-triggered jobs on the cloud worker', async () => {
    const yaml =
      'name: on-msg\ninput:\n  http-poll:\n    url: http://example.com\n    trigger:\n      message: {}\noutput:\n  print: {}\n';
    await putYaml('on-msg', yaml);
    const res = await post('on-msg/deploy', { workers: ['cloud'] });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain('not on the cloud worker');
  });

  it('refuses unknown workers', async () => {
    const res = await post('json-job/deploy', { workers: ['ghost'] });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain('ghost');
  });
});

describe('events', () => {
  it('records the lifecycle and answers filtered queries, oldest first, with a cursor', async () => {
    const all = await json(
      await t.request('/api/events?type=job-deployed,job-staged,job-removed&job=poller&limit=2', {
        headers: admin,
      }),
    );
    expect(all.events).toHaveLength(2);
    expect(all.next_cursor).toBeTruthy();
    const next = await json(
      await t.request(
        `/api/events?type=job-deployed,job-staged,job-removed&job=poller&cursor=${all.next_cursor}`,
        { headers: admin },
      ),
    );
    const types = [...all.events, ...next.events].map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['job-staged', 'job-deployed', 'job-removed']));
    const ids = [...all.events, ...next.events].map((e: { id: string }) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect((await t.request('/api/events?type=not-a-type', { headers: admin })).status).toBe(400);
  });
});

describe('deployment states', () => {
  it('say why a deployment failed (`error`, on failed deployments only), in the job, the list and OpenAPI', async () => {
    const yaml =
      'name: why-failed\ninput:\n  http-poll:\n    url: http://example.com\noutput:\n  print: {}\n';
    expect((await putYaml('why-failed', yaml)).status).toBe(201);
    expect((await post('why-failed/deploy', { workers: ['w2'] })).status).toBe(200);
    const key = (
      await json(await t.request('/api/workers/w2/rotate-key', { method: 'POST', headers: admin }))
    ).key;
    const w2 = bearer(await apiKeyToken(t, key));
    const beat = async (state: string, error?: string) =>
      expect(
        (
          await t.request(
            '/api/worker/heartbeat',
            jsonInit('POST', { jobs: [{ name: 'why-failed', state, ...(error ? { error } : {}) }] }, w2),
          )
        ).status,
      ).toBe(204);
    const deploymentIn = async () => {
      const job = await json(await t.request('/api/jobs/why-failed', { headers: admin }));
      const listed = (await json(await t.request('/api/jobs', { headers: admin }))).find(
        (j: { name: string }) => j.name === 'why-failed',
      );
      expect(listed.deployments).toEqual(job.deployments);
      return job.deployments;
    };

    await beat('failed', 'missing variable SUFFIX');
    expect(await deploymentIn()).toEqual([
      {
        worker: 'w2',
        state: 'failed',
        version: 1,
        updated_at: expect.any(String),
        error: 'missing variable SUFFIX',
      },
    ]);
    // A reason sent beside any other state is not shown: only a failed deployment has one.
    await beat('running', 'left over');
    const running = await deploymentIn();
    expect(running).toEqual([{ worker: 'w2', state: 'running', version: 1, updated_at: expect.any(String) }]);

    const doc = await json(await t.request('/api/openapi.json'));
    expect(doc.components.schemas.Deployment.properties.error).toMatchObject({ type: 'string' });
    expect(doc.components.schemas.Deployment.required).not.toContain('error');
    expect((await post('why-failed/undeploy')).status).toBe(200);
  });
});
