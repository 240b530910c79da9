/**
 * Every list endpoint pages: `?limit=N&page_token=T`, the body the contract's JSON array,
 * `X-Next-Page-Token` while more items follow. Following the tokens visits each item
 * once, in the same stable order as one unpaged request; a token that is not one of ours,
 * or a limit out of range, is a 400 with the contract's error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantCollection } from '../../functions/adapters/firestore-paths.ts';
import { NEXT_PAGE_HEADER } from '../../shared/api/paging.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let admin: Record<string, string>;
const N = 5;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  const send = async (method: string, path: string, body: unknown) => {
    const res = await t.request(path, jsonInit(method, body, admin));
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  };
  // A job written straight to Firestore (as an older version stored it): the lists read it too.
  const db = await t.deps.clients.firestore();
  const now = new Date().toISOString();
  await tenantCollection(db, 'default', 'jobs')
    .doc('legacy')
    .set({
      name: 'legacy',
      version: 1,
      created_at: now,
      updated_at: now,
      definition_json: JSON.stringify({
        name: 'legacy',
        input: { 'http-poll': { url: 'http://x.example' } },
        output: { print: {} },
      }),
      deployments: { 'w-2': { state: 'running', version: 1, updated_at: now } },
    });
  for (let i = 0; i < N; i++) {
    await send('PUT', `/api/jobs/job-${i}`, {
      name: `job-${i}`,
      input: { 'http-poll': { url: 'http://example.com' } },
      output: { print: {} },
    });
    await send('POST', '/api/workers', { id: `w-${i}` });
    await send('POST', '/api/api-keys', { name: `key-${i}`, role: 'viewer' });
    await send('POST', '/api/enrollment-secrets', { name: `fleet-${i}` });
    await send('PUT', `/api/secrets/scope-${i % 2}/secret-${i}`, { value: 'v' });
    await send('PUT', `/api/variables/VAR_${i}`, { value: String(i) });
    await send('POST', '/api/users', {
      username: `user-${i}`,
      password: 'a-long-enough-password',
      role: 'viewer',
    });
    await send('POST', '/api/tenants', { name: `tenant-${i}` });
  }
  // ...deployed to a worker whose record is as old: no index of its deployed jobs.
  const { FieldValue } = await import('@google-cloud/firestore');
  await tenantCollection(db, 'default', 'workers').doc('w-2').update({ deployed_jobs: FieldValue.delete() });
});
afterAll(() => t.close());

async function get(path: string) {
  const res = await t.request(path, { headers: admin });
  return { status: res.status, body: await json(res), next: res.headers.get(NEXT_PAGE_HEADER) };
}

/** Every page of `path` with `limit`, following the tokens. */
async function allPages(path: string, limit: number) {
  const items: unknown[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const query = new URLSearchParams({ limit: String(limit), ...(token ? { page_token: token } : {}) });
    const page = await get(`${path}?${query}`);
    expect(page.status, `${path} page ${pages + 1}`).toBe(200);
    expect(Array.isArray(page.body)).toBe(true);
    expect(page.body.length).toBeLessThanOrEqual(limit);
    items.push(...page.body);
    token = page.next;
    pages++;
  } while (token && pages < 100);
  return { items, pages };
}

const LISTS = [
  '/api/jobs',
  '/api/workers',
  '/api/api-keys',
  '/api/enrollment-secrets',
  '/api/secrets',
  '/api/variables',
  '/api/users',
  '/api/tenants',
];

describe('list paging', () => {
  it.each(LISTS)('%s: pages of 2 hold every item once, in the order of one request', async (path) => {
    const whole = await get(path);
    expect(whole.status).toBe(200);
    expect(whole.next).toBeNull();
    expect(whole.body.length).toBeGreaterThanOrEqual(N);
    const paged = await allPages(path, 2);
    expect(paged.items).toEqual(whole.body);
    expect(paged.pages).toBe(Math.ceil(whole.body.length / 2));
    const single = await allPages(path, 1);
    expect(single.items).toEqual(whole.body);
  });

  it('shows each worker the jobs deployed to it, on every page, until undeployed or the worker is removed', async () => {
    const deploy = await t.request(
      '/api/jobs/job-1/deploy',
      jsonInit('POST', { workers: ['w-1', 'w-2'] }, admin),
    );
    expect(deploy.status).toBe(200);
    const jobsOf = async (id: string) => (await get(`/api/workers/${id}`)).body.jobs;
    expect(await jobsOf('w-1')).toEqual(['job-1']);
    expect(await jobsOf('w-2')).toEqual(['job-1', 'legacy']);
    const listed = (await allPages('/api/workers', 2)).items as { id: string; jobs: string[] }[];
    expect(listed.find((w) => w.id === 'w-2')?.jobs).toEqual(['job-1', 'legacy']);
    const undeploy = await t.request(
      '/api/jobs/job-1/undeploy',
      jsonInit('POST', { workers: ['w-2'] }, admin),
    );
    expect(undeploy.status).toBe(200);
    expect(await jobsOf('w-2')).toEqual(['legacy']);
    // Listing a record without the index has it built: the list then reads workers only.
    const db = await t.deps.clients.firestore();
    const index = async () =>
      (await tenantCollection(db, 'default', 'workers').doc('w-2').get()).get('deployed_jobs') as string[];
    await until(async () => Array.isArray(await index()), 5_000, "w-2's index built");
    expect(await index()).toEqual(['legacy']);
    const deployAgain = await t.request(
      '/api/jobs/job-1/deploy',
      jsonInit('POST', { workers: ['w-2'] }, admin),
    );
    expect(deployAgain.status).toBe(200);
    expect((await index()).sort()).toEqual(['job-1', 'legacy']);
    const relisted = (await allPages('/api/workers', 2)).items as { id: string; jobs: string[] }[];
    expect(relisted.find((w) => w.id === 'w-2')?.jobs).toEqual(['job-1', 'legacy']);
    expect(relisted.find((w) => w.id === 'w-1')?.jobs).toEqual(['job-1']);
    const removed = await t.request('/api/workers/w-1', { method: 'DELETE', headers: admin });
    expect(removed.status).toBe(204);
    expect((await get('/api/jobs/job-1')).body.deployments).toEqual([
      expect.objectContaining({ worker: 'w-2' }),
    ]);
  });

  it('refuses a token that is not one of ours and a limit out of range, changing nothing', async () => {
    for (const query of ['page_token=not-a-token', 'page_token=WzFd', 'limit=0', 'limit=1001', 'limit=two']) {
      const res = await get(`/api/jobs?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('invalid_request');
    }
    const jobs = await get('/api/jobs');
    expect(jobs.body.map((j: { name: string }) => j.name)).toEqual([
      ...[0, 1, 2, 3, 4].map((i) => `job-${i}`),
      'legacy',
    ]);
  });
});
