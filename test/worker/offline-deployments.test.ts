/**
 * A worker that goes offline (three missed heartbeats) no longer shows its jobs as
 * `running`: the sweep puts its running deployments back to `pending` (assigned, not
 * reported), with a `job-state-transition` the server records, and leaves the others
 * (a failed one keeps its reason). Its next heartbeat reports them again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sweepOfflineWorkers } from '../../functions/workers/offline-sweep.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let worker: Record<string, string>;
const yaml = (name: string) =>
  `name: ${name}\ninput:\n  http-poll:\n    url: https://example.org/${name}\noutput:\n  print: {}\n`;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const created = await json(await t.request('/api/workers', jsonInit('POST', { id: 'edge' }, admin)));
  worker = bearer(await apiKeyToken(t, created.key));
  for (const name of ['runs', 'broken']) {
    await t.request(`/api/jobs/${name}`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: yaml(name),
    });
    const deployed = await t.request(
      `/api/jobs/${name}/deploy`,
      jsonInit('POST', { workers: ['edge'] }, admin),
    );
    expect(deployed.status).toBe(200);
  }
});
afterAll(() => t.close());

const beat = (jobs: { name: string; state: string; error?: string }[]) =>
  t.request('/api/worker/heartbeat', jsonInit('POST', { jobs }, worker));
const stateOf = async (job: string) =>
  (await json(await t.request(`/api/jobs/${job}`, { headers: admin }))).deployments[0];

it('puts the running deployments of a worker gone offline back to pending, and its heartbeat brings them back', async () => {
  expect(
    (
      await beat([
        { name: 'runs', state: 'running' },
        { name: 'broken', state: 'failed', error: 'missing secret' },
      ])
    ).status,
  ).toBe(204);
  expect(await stateOf('runs')).toMatchObject({ state: 'running' });

  const quick = { ...t.deps, config: { ...t.deps.config, heartbeatInterval: '10ms' } };
  await new Promise((r) => setTimeout(r, 50));
  expect(await sweepOfflineWorkers(quick)).toEqual(['edge']);
  expect(await stateOf('runs')).toMatchObject({ state: 'pending' });
  expect(await stateOf('broken')).toMatchObject({ state: 'failed', error: 'missing secret' });
  const { events } = await json(
    await t.request('/api/events?type=job-state-transition&job=runs&order=newest&limit=1', {
      headers: admin,
    }),
  );
  expect(events[0]).toMatchObject({
    source: 'server',
    worker: 'edge',
    payload: { from: 'running', to: 'pending' },
  });

  expect((await beat([{ name: 'runs', state: 'running' }])).status).toBe(204);
  expect(await stateOf('runs')).toMatchObject({ state: 'running' });
});
