/**
 * What an upstream answered is content the job received (it may echo the request, headers and
 * all): operators see it, viewers never do, whichever way it travels. An http-poll answer
 * reached viewers in a `job-errors` reason, and a run's error text (quoting it) in the job's
 * deployments (`GET /api/jobs/{name}`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';

const ANSWER = 'UPSTREAM-ECHO authorization: Bearer tenant-token-77';
let t: TestApp;
let upstream: Server;
let admin: Record<string, string>;
let viewer: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  viewer = bearer(await tokenFor(t, { role: 'viewer' }));
  upstream = createServer((_req, res) => {
    res.statusCode = 500;
    res.end(ANSWER);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

describe("an upstream's failed answer", () => {
  it('is shown to operators and withheld from viewers, in events and in deployments', async () => {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
    const put = await t.request('/api/jobs/echoed', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: `name: echoed\ninput:\n  http-poll:\n    url: '${url}'\noutput:\n  print: {}\n`,
    });
    expect(put.status).toBe(201);
    const deploy = await t.request(
      '/api/jobs/echoed/deploy',
      jsonInit('POST', { workers: ['cloud'] }, admin),
    );
    expect(deploy.status).toBe(200);
    await cloudTick(t.deps);

    const errorsAs = async (who: Record<string, string>) =>
      (await json(await t.request('/api/events?type=job-errors&job=echoed', { headers: who }))).events as {
        payload: Record<string, unknown>;
      }[];
    const [operatorSees] = await errorsAs(admin);
    expect(operatorSees?.payload).toMatchObject({ reason: `${url} answered 500`, answer: ANSWER });
    const [viewerSees] = await errorsAs(viewer);
    expect(viewerSees?.payload.reason).toBe(`${url} answered 500`);
    expect(viewerSees?.payload.withheld).toContain('answer');

    const deploymentAs = async (who: Record<string, string>) =>
      (await json(await t.request('/api/jobs/echoed', { headers: who }))).deployments.find(
        (d: { worker: string }) => d.worker === 'cloud',
      );
    expect(await deploymentAs(admin)).toMatchObject({
      state: 'failed',
      error: expect.stringContaining(ANSWER),
    });
    const seen = await deploymentAs(viewer);
    expect(seen).toMatchObject({ state: 'failed', withheld: ['error'] });
    expect(seen.error).toBeUndefined();

    const listed = JSON.stringify(await json(await t.request('/api/jobs', { headers: viewer })));
    const events = JSON.stringify(await json(await t.request('/api/events?limit=1000', { headers: viewer })));
    expect(`${listed}\n${events}`).not.toContain('tenant-token-77');
  });
});
