/**
 * Issue 16, item 21: rendering had no size cap. A job whose own `context:` holds a large
 * value referenced many times made stage, deploy and render (a viewer's read) build strings
 * of gigabytes, and a context change did the same in the fan-out to workers. Rendering now
 * stops at MAX_RENDERED_BYTES of output or MAX_REFERENCES references, with a clear 400 (and
 * an error for that one job where a worker asks for its jobs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REFERENCES, MAX_RENDERED_BYTES } from '../../shared/context/render.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;
let operator: Record<string, string>;
let viewer: Record<string, string>;
let worker: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  operator = bearer(await tokenFor(t, { role: 'operator' }));
  viewer = bearer(await tokenFor(t, { role: 'viewer' }));
  const created = await json(await t.request('/api/workers', jsonInit('POST', { id: 'rw1' }, admin)));
  worker = bearer(await apiKeyToken(t, created.key));
});
afterAll(() => t.close());

/** A job that POSTs `body`, with `context` as its own context block (JSON, so any size fits). */
function job(name: string, body: string, context: Record<string, unknown> = {}) {
  return {
    name,
    context,
    input: { 'http-poll': { url: 'http://127.0.0.1:9/', method: 'POST', body } },
    output: { print: {} },
  };
}

const put = (definition: { name: string }) =>
  t.request(`/api/jobs/${definition.name}`, jsonInit('PUT', definition, operator));
const deploy = (name: string, workers: string[]) =>
  t.request(`/api/jobs/${name}/deploy`, jsonInit('POST', { workers }, operator));
const stage = (name: string) => t.request(`/api/jobs/${name}/stage`, jsonInit('POST', {}, operator));
const render = (name: string) => t.request(`/api/jobs/${name}/render?worker=rw1`, { headers: viewer });

async function expectTooLarge(res: Response, what: RegExp) {
  expect(res.status).toBe(400);
  const body = await json(res);
  expect(body.error.code).toBe('invalid_request');
  expect(JSON.stringify(body.error)).toMatch(what);
}

const SIZE = /renders to more than 1 MiB/;
const COUNT = /more than 10000 context references/;

describe('rendering a job that would grow without bound', () => {
  it('uses limits a user would not reach', () => {
    expect(MAX_RENDERED_BYTES).toBe(1024 * 1024);
    expect(MAX_REFERENCES).toBe(10_000);
  });

  it('refuses a large value referenced many times: deploy and render answer 400 and change nothing', async () => {
    const bomb = job('size-bomb', '{{big}}'.repeat(200), { big: 'x'.repeat(100_000) });
    expect((await put(bomb)).status).toBe(201);
    await expectTooLarge(await deploy('size-bomb', ['rw1']), SIZE);
    await expectTooLarge(await render('size-bomb'), SIZE);
    const stored = await json(await t.request('/api/jobs/size-bomb', { headers: viewer }));
    expect(stored).toMatchObject({ state: 'saved', staged_version: null, deployments: [] });
  });

  it('refuses to stage such a version of a deployed job, which keeps running the version it had', async () => {
    expect((await put(job('restaged', 'small', { big: 'x' }))).status).toBe(201);
    expect((await deploy('restaged', ['rw1'])).status).toBe(200);
    expect((await put(job('restaged', '{{big}}'.repeat(200), { big: 'x'.repeat(100_000) }))).status).toBe(
      200,
    );
    await expectTooLarge(await stage('restaged'), SIZE);
    const stored = await json(await t.request('/api/jobs/restaged', { headers: viewer }));
    expect(stored).toMatchObject({ version: 2, staged_version: 1 });
  });

  it('refuses more references than the limit, however small the values', async () => {
    const many = job('count-bomb', '{{a}}'.repeat(MAX_REFERENCES + 1), { a: 'x' });
    expect((await put(many)).status).toBe(201);
    await expectTooLarge(await deploy('count-bomb', ['rw1']), COUNT);
    await expectTooLarge(await render('count-bomb'), COUNT);
  });

  it('refuses the issue’s own example (a 500 KB value referenced 50,000 times) at once', async () => {
    const huge = job('issue-bomb', '{{big}}'.repeat(50_000), { big: 'x'.repeat(500_000) });
    expect((await put(huge)).status).toBe(201);
    const started = Date.now();
    await expectTooLarge(await deploy('issue-bomb', ['rw1']), COUNT);
    await expectTooLarge(await render('issue-bomb'), COUNT);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('renders a job just under the limits', async () => {
    const fits = job('fits', `{{big}}${'{{a}}'.repeat(1000)}`, { big: 'x'.repeat(900_000), a: 'y' });
    expect((await put(fits)).status).toBe(201);
    const res = await render('fits');
    expect(res.status).toBe(200);
    expect((await json(res)).definition.input['http-poll'].body).toHaveLength(901_000);
  });
});

describe('a context change that makes a deployed job too large', () => {
  it('gives that job an error on the worker and the cloud worker, and the other jobs still render', async () => {
    expect(
      (await t.request('/api/contexts/update-global', jsonInit('POST', { blob: 'small' }, admin))).status,
    ).toBe(200);
    expect((await put(job('grows', '{{blob}}'.repeat(100)))).status).toBe(201);
    expect(await put(job('steady', 'steady'))).toMatchObject({ status: 201 });
    expect((await deploy('grows', ['rw1', 'cloud'])).status).toBe(200);
    expect((await deploy('steady', ['rw1'])).status).toBe(200);

    const blob = 'b'.repeat(200_000);
    expect((await t.request('/api/contexts/update-global', jsonInit('POST', { blob }, admin))).status).toBe(
      200,
    );

    const res = await t.request('/api/worker/jobs', { headers: worker });
    expect(res.status).toBe(200);
    const jobs = (await json(res)) as { name: string; definition: unknown; error?: string }[];
    const grows = jobs.find((j) => j.name === 'grows')!;
    expect(grows.definition).toBeNull();
    expect(grows.error).toMatch(SIZE);
    expect(jobs.find((j) => j.name === 'steady')!.definition).not.toBeNull();

    await cloudTick(t.deps);
    const errors = await json(await t.request('/api/events?type=job-errors&job=grows', { headers: admin }));
    expect(JSON.stringify(errors.events)).toMatch(SIZE);
  });
});
