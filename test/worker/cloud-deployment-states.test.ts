/**
 * Issue 17, behaviour 1 and 2: a deployment on the `cloud` worker shows what a worker's
 * would (`running` during a run, `idle` between runs, `failed` with the reason, gone after
 * undeploy), and staging a job already on `cloud` checks it as a deploy to `cloud` would.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { deployJob } from '../security/worker-helpers.ts';

let t: TestApp;
let admin: Record<string, string>;
let upstream: Server;
/** Requests the upstream holds until the test answers them. */
const held: ServerResponse[] = [];
let onRequest: (() => void) | undefined;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  upstream = createServer((_req, res) => {
    held.push(res);
    onRequest?.();
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  for (const res of held) res.end('{}');
  upstream.close();
  await t.close();
});

const url = () => `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;

async function put(name: string, yaml: string) {
  const res = await t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: yaml,
  });
  expect(res.status).toBeLessThan(300);
}

async function cloudDeployment(name: string) {
  const job = await json(await t.request(`/api/jobs/${name}`, { headers: admin }));
  return job.deployments.find((d: { worker: string }) => d.worker === 'cloud') as
    | { state: string; error?: string }
    | undefined;
}

async function transitions(name: string) {
  const page = await json(
    await t.request(`/api/events?type=job-state-transition&job=${name}&worker=cloud`, { headers: admin }),
  );
  return (page.events as { payload: { from: string; to: string; error?: string } }[]).map(
    (e) => `${e.payload.from}->${e.payload.to}`,
  );
}

describe('deployment states on the cloud worker', () => {
  it('shows pending, then running during the run, then stopped after the one run of a job without a trigger; undeploy makes it disappear', async () => {
    await deployJob(
      t,
      admin,
      'states',
      ['cloud'],
      `name: states\ninput:\n  http-poll:\n    url: ${url()}\n    json: true\noutput:\n  discard: {}\n`,
    );
    expect((await cloudDeployment('states'))?.state).toBe('pending');

    const requested = new Promise<void>((resolve) => {
      onRequest = resolve;
    });
    const tick = cloudTick(t.deps);
    await requested;
    // The run is under way (the upstream holds its request): the deployment says so.
    expect((await cloudDeployment('states'))?.state).toBe('running');
    held.shift()!.end('{"ok":true}');
    await tick;
    expect((await cloudDeployment('states'))?.state).toBe('stopped');
    expect(await transitions('states')).toEqual(['pending->running', 'running->stopped']);

    const undeployed = await json(
      await t.request('/api/jobs/states/undeploy', jsonInit('POST', { workers: ['cloud'] }, admin)),
    );
    expect(undeployed.deployments).toEqual([]);
    // A later tick does not bring the deployment back.
    await cloudTick(t.deps);
    expect(await cloudDeployment('states')).toBeUndefined();
  });

  it('shows failed with the reason while a run cannot happen, and runs once it can', async () => {
    await deployJob(
      t,
      admin,
      'needs-var',
      ['cloud'],
      `name: needs-var\ninput:\n  http-poll:\n    url: '${url()}\${dyn|STATES_SUFFIX}'\n    json: true\noutput:\n  discard: {}\n`,
    );
    await cloudTick(t.deps);
    const failed = await json(await t.request('/api/jobs/needs-var', { headers: admin }));
    expect(failed.deployments).toEqual([expect.objectContaining({ worker: 'cloud', state: 'failed' })]);
    expect(await transitions('needs-var')).toEqual(['pending->failed']);
    const events = await json(
      await t.request('/api/events?type=job-state-transition&job=needs-var', { headers: admin }),
    );
    expect(events.events[0].payload.error).toBe('missing variable STATES_SUFFIX');

    await t.request('/api/variables/STATES_SUFFIX', jsonInit('PUT', { value: 'x' }, admin));
    onRequest = () => held.shift()!.end('{"ok":true}');
    await cloudTick(t.deps);
    expect((await cloudDeployment('needs-var'))?.state).toBe('stopped');
    expect(await transitions('needs-var')).toEqual([
      'pending->failed',
      'failed->running',
      'running->stopped',
    ]);
  });

  it('keeps the first 2,000 characters of a long reason, as a heartbeat does', async () => {
    const names = Array.from({ length: 120 }, (_, i) => `A_RATHER_LONG_VARIABLE_NAME_${i}`);
    await deployJob(
      t,
      admin,
      'needs-many',
      ['cloud'],
      `name: needs-many\ninput:\n  http-poll:\n    url: '${url()}${names.map((n) => `\${dyn|${n}}`).join('/')}'\n    json: true\noutput:\n  discard: {}\n`,
    );
    await cloudTick(t.deps);
    const error = (await cloudDeployment('needs-many'))?.error ?? '';
    expect(error).toMatch(/^missing variable A_RATHER_LONG_VARIABLE_NAME_0, variable .*…$/);
    expect(error).toHaveLength(2_000);
    // Looked at again, the same reason is no new transition.
    await cloudTick(t.deps);
    expect(await transitions('needs-many')).toEqual(['pending->failed']);
  });
});

describe('a job with a trigger on the cloud worker', () => {
  it('is idle between runs', async () => {
    await deployJob(
      t,
      admin,
      'hourly',
      ['cloud'],
      `name: hourly\ninput:\n  http-poll:\n    url: ${url()}\n    json: true\n    trigger:\n      interval:\n        duration: 1h\noutput:\n  discard: {}\n`,
    );
    // Its first run comes on the first tick that sees it; then it waits its hour.
    await cloudTick(t.deps);
    expect((await cloudDeployment('hourly'))?.state).toBe('idle');
    await cloudTick(t.deps);
    expect((await cloudDeployment('hourly'))?.state).toBe('idle');
    expect(await transitions('hourly')).toEqual(['pending->running', 'running->idle']);
  });
});

describe('staging a job already on the cloud worker', () => {
  it('refuses a version the cloud worker cannot run (a message trigger), and changes nothing', async () => {
    await deployJob(
      t,
      admin,
      'chain',
      ['cloud'],
      `name: chain\ninput:\n  http-poll:\n    url: ${url()}\n    json: true\n    trigger:\n      interval:\n        duration: 1h\noutput:\n  discard: {}\n`,
    );
    const before = await json(await t.request('/api/jobs/chain', { headers: admin }));
    await put(
      'chain',
      `name: chain\ninput:\n  http-poll:\n    url: ${url()}\n    json: true\n    trigger:\n      message:\n        filter-type: [job-run-ended]\noutput:\n  discard: {}\n`,
    );
    const staged = await t.request('/api/jobs/chain/stage', { method: 'POST', headers: admin });
    expect(staged.status).toBe(400);
    const body = await json(staged);
    expect(body.error.message).toContain('not on the cloud worker');
    expect(body.error.details).toContainEqual(
      expect.objectContaining({ path: 'input.http-poll.trigger.message' }),
    );
    const after = await json(await t.request('/api/jobs/chain', { headers: admin }));
    expect(after.staged_version).toBe(before.staged_version);
    expect(after.deployments).toEqual(before.deployments);
  });
});
