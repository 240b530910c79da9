/**
 * Issue 16, item 16 (jobs, contexts, secrets, variables): names every JavaScript object
 * answers to. Stored maps come back from Firestore as plain objects, so a lookup by such a
 * name finds `Object.prototype`'s member. They are refused as job names, context keys (in
 * the context maps and in a job's own `context:` block), variable names, secret scopes and
 * names and worker ids; as `{{name}}` references they are simply not defined. Each is walked
 * through the API and the CLI, and nothing stored changes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { json, jsonInit } from '../helpers/http.ts';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

let t: TestApp;
let admin: Record<string, string>;
let adminToken: string;
beforeAll(async () => {
  t = await testApp();
  adminToken = await bootstrapTestAdmin(t);
  admin = bearer(adminToken);
  expect((await t.request('/api/workers', jsonInit('POST', { id: 'pw1' }, admin))).status).toBe(201);
  expect(
    (await t.request('/api/contexts/update-global', jsonInit('POST', { obj: { a: 1 }, text: 'abc' }, admin)))
      .status,
  ).toBe(200);
  expect((await putJob(jobJson('good', 'http://example.com/'))).status).toBe(201);
  expect(
    (await t.request('/api/jobs/good/deploy', jsonInit('POST', { workers: ['pw1'] }, admin))).status,
  ).toBe(200);
});
afterAll(() => t.close());

/** Definitions and context bodies as JSON text: an object literal would turn `__proto__` into a prototype. */
function jobJson(name: string, url: string, context = '{}'): string {
  return `{"name":${JSON.stringify(name)},"context":${context},"input":{"http-poll":{"url":${JSON.stringify(url)}}},"output":{"print":{}}}`;
}

function putJob(body: string, name = (JSON.parse(body) as { name: string }).name) {
  return t.request(`/api/jobs/${encodeURIComponent(name)}`, {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/json' },
    body,
  });
}

const post = (path: string, body: string) =>
  t.request(path, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body });

/** Everything the tenant has stored in the collections these routes write. */
async function tenantState(): Promise<string> {
  const db = await t.deps.clients.firestore();
  const tenant = db.collection('tenants').doc('default');
  const parts: Record<string, unknown> = {};
  for (const name of ['jobs', 'contexts', 'variables', 'secrets', 'workers']) {
    const snap = await tenant.collection(name).get();
    parts[name] = snap.docs.map((d) => [d.id, d.data()]).sort();
  }
  return JSON.stringify(parts);
}

async function expectRefused(res: Response, what: string) {
  expect(res.status, what).toBe(400);
  const body = await json(res);
  expect(body.error.code, what).toBe('invalid_request');
  expect(typeof body.error.message, what).toBe('string');
}

describe('names that are properties of every object', () => {
  it('are refused as job names, context keys, variable names, secret scopes and names, and worker ids; nothing changes', async () => {
    const before = await tenantState();
    for (const name of NAMES) {
      const path = encodeURIComponent(name);
      await expectRefused(await putJob(jobJson(name, 'http://example.com/'), name), `job ${name}`);
      await expectRefused(await putJob(jobJson(name, 'http://example.com/'), 'good'), `definition ${name}`);
      for (const action of ['stage', 'deploy', 'undeploy'])
        await expectRefused(
          await post(`/api/jobs/${path}/${action}`, '{"workers":["pw1"]}'),
          `${action} ${name}`,
        );
      await expectRefused(await t.request(`/api/jobs/${path}`, { headers: admin }), `get job ${name}`);
      await expectRefused(
        await t.request(`/api/jobs/${path}`, { method: 'DELETE', headers: admin }),
        `delete job ${name}`,
      );
      await expectRefused(
        await t.request(`/api/jobs/${path}/render?worker=pw1`, { headers: admin }),
        `render job ${name}`,
      );

      const key = `{${JSON.stringify(name)}:"x"}`;
      await expectRefused(
        await putJob(jobJson('good', 'http://example.com/', key)),
        `definition context key ${name}`,
      );
      await expectRefused(await post('/api/contexts/update-global', key), `global key ${name}`);
      await expectRefused(await post('/api/contexts/update-worker-map/pw1', key), `worker key ${name}`);
      await expectRefused(await post('/api/contexts/update-worker-nomerge/pw1', key), `worker map ${name}`);
      await expectRefused(await post('/api/contexts/update-job-map/good', key), `job key ${name}`);
      await expectRefused(
        await post('/api/contexts/import', `{"format":"sluice-context/v1","global":${key}}`),
        `import key ${name}`,
      );
      await expectRefused(await post(`/api/contexts/update-job-map/${path}`, '{"a":1}'), `job map ${name}`);
      await expectRefused(
        await t.request(`/api/contexts/job/${path}`, { headers: admin }),
        `read job map ${name}`,
      );
      await expectRefused(
        await t.request(`/api/contexts/resolve?job=${path}&worker=pw1`, { headers: admin }),
        `resolve job ${name}`,
      );

      await expectRefused(
        await t.request(`/api/variables/${path}`, jsonInit('PUT', { value: 'v' }, admin)),
        `variable ${name}`,
      );
      await expectRefused(
        await t.request(`/api/variables/${path}`, { headers: admin }),
        `get variable ${name}`,
      );
      await expectRefused(
        await t.request(`/api/secrets/${path}/x`, jsonInit('PUT', { value: 'v' }, admin)),
        `secret scope ${name}`,
      );
      await expectRefused(
        await t.request(`/api/secrets/x/${path}`, jsonInit('PUT', { value: 'v' }, admin)),
        `secret name ${name}`,
      );

      const workers = `{"workers":[${JSON.stringify(name)}]}`;
      await expectRefused(await post('/api/jobs/good/deploy', workers), `deploy to ${name}`);
      await expectRefused(await post('/api/jobs/good/undeploy', workers), `undeploy from ${name}`);
      await expectRefused(
        await t.request(`/api/jobs/good/render?worker=${path}`, { headers: admin }),
        `render for ${name}`,
      );
      await expectRefused(
        await t.request(`/api/contexts/resolve?job=good&worker=${path}`, { headers: admin }),
        `resolve for ${name}`,
      );
    }
    expect(await tenantState()).toBe(before);
  });

  it('are not defined as {{references}}, at the top level or below', async () => {
    for (const name of NAMES) {
      const job = `ref-${name.replace(/_/g, 'u').toLowerCase()}`;
      expect((await putJob(jobJson(job, `http://example.com/{{${name}}}`))).status, job).toBe(201);
      const res = await t.request(`/api/jobs/${job}/render?worker=pw1`, { headers: admin });
      await expectRefused(res.clone(), `render {{${name}}}`);
      const body = await json(res);
      expect(body.error.details).toEqual([
        { path: 'input.http-poll.url', message: `worker pw1: missing context key \`${name}\`` },
      ]);
      expect(JSON.stringify(body)).not.toMatch(/native code|\[object /);

      for (const parent of ['obj', 'text']) {
        const nested = `${job}-${parent}`;
        expect((await putJob(jobJson(nested, `http://example.com/{{${parent}.${name}}}`))).status).toBe(201);
        const answer = await json(
          await t.request(`/api/jobs/${nested}/render?worker=pw1`, { headers: admin }),
        );
        expect(answer.error.details, `{{${parent}.${name}}}`).toEqual([
          {
            path: 'input.http-poll.url',
            message: `worker pw1: context key \`${parent}.${name}\` does not resolve`,
          },
        ]);
      }
    }
  });
});

describe('the CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-proto-'));
  const write = (file: string, text: string) => {
    const path = join(dir, file);
    writeFileSync(path, text);
    return path;
  };

  it('sluice job validate refuses them as job names and context keys', async () => {
    for (const name of NAMES) {
      const named = write(
        'named.yaml',
        `name: '${name}'\ninput:\n  http-poll:\n    url: http://x.org/\noutput:\n  print: {}\n`,
      );
      const r = await runCli(['job', 'validate', named]);
      expect(r.code, `name ${name}`).toBe(1);
      expect(r.stderr).toContain('reserved');
      const keyed = write(
        'keyed.yaml',
        `name: keyed\ncontext:\n  '${name}': x\ninput:\n  http-poll:\n    url: http://x.org/\noutput:\n  print: {}\n`,
      );
      const k = await runCli(['job', 'validate', keyed]);
      expect(k.code, `key ${name}`).toBe(1);
      expect(k.stderr).toContain('reserved');
    }
  });

  it('sluice job run and sluice job render find them not defined', async () => {
    const server = await serveTestApp(t);
    try {
      for (const name of NAMES) {
        const file = write(
          'ref.yaml',
          `name: ref\ninput:\n  http-poll:\n    url: 'http://x.org/{{${name}}}'\noutput:\n  print: {}\n`,
        );
        const local = await runCli(['job', 'run', file]);
        expect(local.code, `run {{${name}}}`).toBe(1);
        expect(local.stderr).toContain(`missing context key \`${name}\``);
        const job = `ref-${name.replace(/_/g, 'u').toLowerCase()}`;
        const remote = await runCli(['job', 'render', job, '-w', 'pw1'], {
          env: { SLUICE_SERVER: server.url, SLUICE_TOKEN: adminToken },
        });
        expect(remote.code, `render {{${name}}}`).toBe(1);
        expect(remote.stderr).toContain(`missing context key \`${name}\``);
        expect(remote.stderr + remote.stdout).not.toMatch(/native code|\[object /);
      }
    } finally {
      await server.close();
    }
  });
});
