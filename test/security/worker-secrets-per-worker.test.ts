// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * A worker host sees the secrets its jobs use, and nothing else (docs/security.md). One job
 * deployed to two workers, each with its own secret through its worker context: the key of
 * the edge worker fetched the production worker's secret, since the control plane allowed
 * every secret the job uses on any worker. Now a worker gets the secrets of the job as
 * rendered for it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

async function worker(id: string) {
  const created = await t.request('/api/workers', jsonInit('POST', { id }, admin));
  expect(created.status).toBe(201);
  return bearer(await apiKeyToken(t, (await json(created)).key));
}

const ok = async (res: Promise<Response>, status: number) => {
  const answer = await res;
  expect(answer.status, await answer.clone().text()).toBe(status);
  return answer;
};

it('gives a worker the secrets of the job as rendered for it, not those of other workers', async () => {
  await ok(t.request('/api/secrets/prod/db', jsonInit('PUT', { value: 'PROD-SUPER-SECRET' }, admin)), 204);
  await ok(t.request('/api/secrets/edge/db', jsonInit('PUT', { value: 'edge-secret' }, admin)), 204);
  const edge = await worker('w-edge');
  await worker('w-prod');
  for (const [id, secret] of [
    ['w-edge', 'edge/db'],
    ['w-prod', 'prod/db'],
  ])
    await ok(
      t.request(
        `/api/contexts/update-worker-map/${id}`,
        jsonInit('POST', { token: `\${secret|${secret}}` }, admin),
      ),
      200,
    );
  await ok(
    t.request('/api/jobs/sync', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: "name: sync\ninput:\n  http-poll:\n    url: 'http://127.0.0.1:9/a.json?t={{token}}'\noutput:\n  print: {}\n",
    }),
    201,
  );
  await ok(
    t.request('/api/jobs/sync/deploy', jsonInit('POST', { workers: ['w-edge', 'w-prod'] }, admin)),
    200,
  );

  const resolve = (refs: string[]) =>
    t.request('/api/worker/secrets/resolve', jsonInit('POST', { job: 'sync', refs }, edge));
  const own = await ok(resolve(['edge/db']), 200);
  expect((await json(own)).values).toEqual({ 'edge/db': 'edge-secret' });
  const other = await ok(resolve(['prod/db']), 403);
  const text = await other.text();
  expect(text).toContain('prod/db');
  expect(text).not.toContain('PROD-SUPER-SECRET');
});
