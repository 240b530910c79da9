// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * A string that is exactly one `{{key}}` reference takes the context value with its JSON type
 * (CONTRACT section 3), so it is accepted when a job is saved wherever a typed value is
 * expected: a map (`credentials`, `trigger`, `headers`), a list (`object-names`), a choice
 * (`timestamp-mode`), at any depth. Rendering then checks the value fully: a context value of
 * the wrong JSON type is refused at deploy, naming the field and the worker, and nothing
 * changes. A reference inside longer text is text, so a map or list field still refuses it.
 *
 * What a job kept in the control plane may not hold (a credentials `path`: a file of the
 * machine that runs it) is checked when it is saved; a whole reference may not stand for a
 * map that could bring one in, since rendering does not check that rule again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderJob } from '../../shared/context/render.ts';
import { jobJsonSchema } from '../../shared/job/json-schema.ts';
import { validateJob } from '../../shared/job/validate.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin, tokenFor } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

/** A gcs input and an http-post output whose typed fields are whole references. */
const GCS_YAML = (name: string) => `name: ${name}
input:
  gcs:
    bucket-name: acme-logs
    credentials:
      storage-url: gs://acme-logs
    object-names: '{{names}}'
    timestamp-mode: '{{ stamp }}'
    retry: '{{retry}}'
    trigger: '{{schedule}}'
output:
  http-post:
    url: https://collector.example.com/in
    headers: '{{post_headers}}'
`;

/** An http-poll input whose headers and trigger are whole references. */
const POLL_YAML = (name: string) => `name: ${name}
input:
  http-poll:
    url: https://status.example.com/
    headers: '{{poll_headers}}'
    trigger: '{{poll_trigger}}'
output:
  print: {}
`;

/** Context values of the right JSON type for both jobs. */
const GOOD_CONTEXT = {
  names: ['logs/a/', 'logs/b/'],
  stamp: 'last-modified',
  retry: { timeout: '10s', retries: 3 },
  schedule: { interval: { duration: '5m', window: { size: '5m' } } },
  post_headers: { 'x-team': 'data', 'content-language': 'en' },
  poll_headers: { accept: 'application/json' },
  poll_trigger: { cron: { cron: '*/5 * * * *' } },
};

describe('saving, deploying and rendering whole references in typed fields (API)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await testApp();
    admin = bearer(await bootstrapTestAdmin(t));
    for (const id of ['w1', 'w2']) await t.request('/api/workers', jsonInit('POST', { id }, admin));
  });
  afterAll(() => t.close());

  const putYaml = (name: string, text: string, headers = admin) =>
    t.request(`/api/jobs/${name}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/yaml' },
      body: text,
    });
  const deploy = (name: string, workers: string[], headers = admin) =>
    t.request(`/api/jobs/${name}/deploy`, jsonInit('POST', { workers }, headers));
  const workerMap = (worker: string, values: Record<string, unknown>) =>
    t.request(`/api/contexts/update-worker-map/${worker}`, jsonInit('POST', values, admin));
  const job = async (name: string) => json(await t.request(`/api/jobs/${name}`, { headers: admin }));

  it('saves a job whose object-names, timestamp-mode, retry, trigger and headers are whole references (YAML and JSON)', async () => {
    const gcs = await putYaml('whole-gcs', GCS_YAML('whole-gcs'));
    expect(gcs.status, await gcs.clone().text()).toBe(201);
    const poll = await putYaml('whole-poll', POLL_YAML('whole-poll'));
    expect(poll.status, await poll.clone().text()).toBe(201);
    const fromJson = await t.request(
      '/api/jobs/whole-json',
      jsonInit(
        'PUT',
        {
          name: 'whole-json',
          input: {
            gcs: {
              'bucket-name': 'acme-logs',
              credentials: { 'storage-url': 'gs://acme-logs' },
              'object-names': '{{names}}',
              trigger: '{{schedule}}',
              'timestamp-mode': 'last-modified',
              'maximum-age': '{{max_age}}',
            },
          },
          output: { 'http-post': { url: 'https://collector.example.com/in', headers: '{{post_headers}}' } },
        },
        admin,
      ),
    );
    expect(fromJson.status, await fromJson.clone().text()).toBe(201);
  });

  it('refuses a deploy when a context value has the wrong JSON type, naming field and worker, and changes nothing', async () => {
    await workerMap('w1', GOOD_CONTEXT);
    await workerMap('w2', {
      ...GOOD_CONTEXT,
      names: 'logs/a/',
      schedule: '5m',
      post_headers: ['x-team: data'],
    });
    const before = await job('whole-gcs');
    const res = await deploy('whole-gcs', ['w1', 'w2']);
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.message).toContain('nothing was changed');
    expect(body.error.details).toEqual(
      expect.arrayContaining([
        { path: 'input.gcs.object-names', message: 'worker w2: expected a list, got a string ("logs/a/")' },
        {
          path: 'input.gcs.trigger',
          message: 'worker w2: trigger must be a map of fields, not a string ("5m")',
        },
        { path: 'output.http-post.headers', message: 'worker w2: expected a map, got a list' },
      ]),
    );
    expect(body.error.details.every((d: { message: string }) => d.message.startsWith('worker w2: '))).toBe(
      true,
    );
    const after = await job('whole-gcs');
    expect(after.deployments).toEqual([]);
    expect(after.state).toBe(before.state);
    expect(after.version).toBe(before.version);
  });

  it('deploys with context values of the right JSON type and renders them with their type', async () => {
    const res = await deploy('whole-gcs', ['w1']);
    expect(res.status, await res.clone().text()).toBe(200);
    const rendered = await json(await t.request('/api/jobs/whole-gcs/render?worker=w1', { headers: admin }));
    expect(rendered.definition.input.gcs).toMatchObject({
      'object-names': ['logs/a/', 'logs/b/'],
      'timestamp-mode': 'last-modified',
      retry: { timeout: '10s', retries: 3 },
      trigger: { interval: { duration: '5m', window: { size: '5m' } } },
    });
    expect(rendered.definition.output['http-post'].headers).toEqual({
      'x-team': 'data',
      'content-language': 'en',
    });
    expect(rendered.sources).toMatchObject({ names: 'worker', schedule: 'worker', post_headers: 'worker' });

    expect((await deploy('whole-poll', ['w1'])).status).toBe(200);
    const poll = await json(await t.request('/api/jobs/whole-poll/render?worker=w1', { headers: admin }));
    expect(poll.definition.input['http-poll']).toMatchObject({
      headers: { accept: 'application/json' },
      trigger: { cron: { cron: '*/5 * * * *' } },
    });
  });

  it('checks the values inside a whole reference as fully as written ones', async () => {
    await workerMap('w2', { ...GOOD_CONTEXT, schedule: { interval: { duration: '0s' } }, stamp: 'newest' });
    const res = await deploy('whole-gcs', ['w2']);
    expect(res.status).toBe(400);
    const details = (await json(res)).error.details;
    expect(details).toEqual(
      expect.arrayContaining([
        {
          path: 'input.gcs.trigger.interval.duration',
          message: 'worker w2: must be more than 0, e.g. 1s or 500ms',
        },
        {
          path: 'input.gcs.timestamp-mode',
          message: expect.stringMatching(/^worker w2: `newest` is not allowed/),
        },
      ]),
    );
    expect((await job('whole-gcs')).deployments.map((d: { worker: string }) => d.worker)).toEqual(['w1']);
  });

  it('refuses at save a reference inside longer text where a map, a list or a choice is expected', async () => {
    const cases: [string, string, string, RegExp][] = [
      ['headers', "headers: 'x-{{h}}'", 'input.http-poll.headers', /^expected a map, got a string/],
      ['trigger', "trigger: 'every {{t}}'", 'input.http-poll.trigger', /^trigger must be a map of fields/],
      ['spaces', "headers: ' {{h}}'", 'input.http-poll.headers', /^expected a map, got a string/],
      ['two', "headers: '{{a}}{{b}}'", 'input.http-poll.headers', /^expected a map, got a string/],
    ];
    for (const [name, line, path, message] of cases) {
      const yaml = `name: partial-${name}\ninput:\n  http-poll:\n    url: https://example.com/\n    ${line}\noutput:\n  print: {}\n`;
      const res = await putYaml(`partial-${name}`, yaml);
      expect(res.status, line).toBe(400);
      expect((await json(res)).error.details, line).toEqual([
        { path, message: expect.stringMatching(message), line: 5, column: expect.any(Number) },
      ]);
      expect((await t.request(`/api/jobs/partial-${name}`, { headers: admin })).status).toBe(404);
    }
    // A choice of a word or a map takes a whole reference, and judges other text as a word.
    const choice = await putYaml(
      'partial-choice',
      GCS_YAML('partial-choice').replace("'{{ stamp }}'", "'last-{{stamp}}'"),
    );
    expect(choice.status).toBe(400);
    expect((await json(choice)).error.details).toEqual([
      expect.objectContaining({
        path: 'input.gcs.timestamp-mode',
        message: expect.stringMatching(/^`last-\{\{stamp\}\}` is not allowed here/),
      }),
    ]);
    const list = await putYaml(
      'partial-list',
      GCS_YAML('partial-list').replace("'{{names}}'", "'logs/{{prefix}}'"),
    );
    expect(list.status).toBe(400);
    expect((await json(list)).error.details).toEqual([
      expect.objectContaining({
        path: 'input.gcs.object-names',
        message: 'expected a list, got a string ("logs/{{prefix}}")',
      }),
    ]);
  });

  it('keeps secret rules: an operator may not deploy a job a whole reference brings a secret into', async () => {
    const operator = bearer(await tokenFor(t, { role: 'operator' }));
    expect((await putYaml('whole-secret', POLL_YAML('whole-secret'), operator)).status).toBe(201);
    await workerMap('w2', {
      ...GOOD_CONTEXT,
      poll_headers: { authorization: 'Bearer ${secret|api/token}' },
    });
    const res = await deploy('whole-secret', ['w2'], operator);
    expect(res.status).toBe(403);
    expect((await json(res)).error.message).toContain('api/token');
    expect((await job('whole-secret')).deployments).toEqual([]);
  });

  it('keeps `name` and `context` literal, and credentials a map written out on the control plane', async () => {
    const named = await putYaml('lit-name', POLL_YAML('{{job_name}}'));
    expect(named.status).toBe(400);
    const context = await putYaml(
      'lit-context',
      POLL_YAML('lit-context').replace('input:', "context: '{{ctx}}'\ninput:"),
    );
    expect(context.status).toBe(400);
    expect((await json(context)).error.details).toEqual([
      expect.objectContaining({ path: 'context', message: 'expected a map, got a string ("{{ctx}}")' }),
    ]);

    // A whole `{{creds}}` could bring in `path` (a file of the worker's machine), which only saving checks.
    for (const [name, credentials] of [
      ['cred-whole', "credentials: '{{creds}}'"],
      ['cred-source', "credentials:\n      storage-url: gs://acme-logs\n      service-account: '{{sa}}'"],
    ] as const) {
      const res = await putYaml(
        name,
        GCS_YAML(name).replace('credentials:\n      storage-url: gs://acme-logs', credentials),
      );
      expect(res.status, name).toBe(400);
      const [detail] = (await json(res)).error.details;
      expect(detail.path).toMatch(/^input\.gcs\.credentials/);
      expect(detail.message).toMatch(/may not come whole from a \{\{key\}\} reference/);
      expect(detail.message).toContain('path');
    }
    // Written out, its values may still be references.
    const written = await putYaml(
      'cred-key',
      GCS_YAML('cred-key').replace(
        'storage-url: gs://acme-logs',
        "storage-url: '{{url}}'\n      service-account:\n        key: '{{sa_key}}'",
      ),
    );
    expect(written.status, await written.clone().text()).toBe(201);
  });
});

describe('whole references in typed fields (validation and rendering)', () => {
  const job = (gcs: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name: 'unit',
    input: {
      gcs: {
        'bucket-name': 'acme-logs',
        credentials: { 'storage-url': 'gs://acme-logs' },
        'object-names': ['x/'],
        ...gcs,
      },
    },
    output: { print: {} },
    ...extra,
  });

  it('accepts whole credentials where the job runs on its own machine (saved level) and renders them fully typed', () => {
    const definition = job({ credentials: '{{creds}}' });
    expect(validateJob(definition, { level: 'saved' }).ok).toBe(true);
    expect(validateJob(definition, { level: 'stored' }).ok).toBe(false);
    const rendered = renderJob(definition, {
      creds: { 'storage-url': 'gs://acme-logs', 'application-credentials': { path: '/home/me/key.json' } },
    });
    expect(rendered.ok && rendered.definition.input.gcs?.credentials).toEqual({
      'storage-url': 'gs://acme-logs',
      'application-credentials': { path: '/home/me/key.json' },
    });
    expect(renderJob(definition, { creds: 'gs://acme-logs' })).toEqual({
      ok: false,
      errors: [
        {
          path: 'input.gcs.credentials',
          message: 'credentials must be a map of fields, not a string ("gs://acme-logs")',
        },
      ],
    });
  });

  it('accepts a whole reference at any depth: a window, a list item map, an action', () => {
    const definition = job(
      {
        'timestamp-mode': 'last-modified',
        trigger: { interval: { duration: '1m', window: '{{window}}' } },
        notifications: '{{notify}}',
        fingerprinting: true,
      },
      { actions: [{ set: '{{fields}}' }, { remove: '{{drop}}' }, { 'parse-timestamp': '{{ts}}' }] },
    );
    expect(validateJob(definition, { level: 'stored' })).toEqual({ ok: true, job: expect.anything() });
    const rendered = renderJob(definition, {
      window: { size: '1m' },
      notify: { subscription: 'uploads' },
      fields: { source: '"gcs"' },
      drop: ['debug'],
      ts: { field: 'time', format: 'rfc3339' },
    });
    expect(rendered.ok, JSON.stringify(rendered)).toBe(true);
    const wrong = renderJob(definition, {
      window: { size: '1m' },
      notify: { subscription: 'uploads' },
      fields: { source: 'event.' },
      drop: 'debug',
      ts: { field: 'time', format: 'rfc3339' },
    });
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.errors.map((e) => e.path)).toEqual([
      'actions.0.set.source',
      'actions.1.remove',
    ]);
  });

  it('keeps the secret rule of expressions: a whole reference may not bring a secret into one', () => {
    const definition = job({}, { actions: [{ set: '{{fields}}' }] });
    const rendered = renderJob(definition, { fields: { token: '"${secret|api/token}"' } });
    expect(rendered).toEqual({
      ok: false,
      errors: [
        {
          path: 'actions.0.set.token',
          message: expect.stringContaining('{secret|...} is not allowed in an expression'),
        },
      ],
    });
  });

  it('offers the whole reference in the JSON Schema of job files, for maps, lists and choices alike', () => {
    type Node = { properties?: Record<string, Node>; anyOf?: Node[]; type?: string; pattern?: string };
    const schema = jobJsonSchema() as Node;
    // The gcs input's map is a field of `input` too: its fields are in its map alternative.
    const gcs = schema.properties!.input!.properties!.gcs!.anyOf!.find((a) => a.properties)!;
    const allowsWhole = (field: Node, text: string) =>
      (field.anyOf ?? []).some(
        (alternative) =>
          alternative.type === 'string' &&
          alternative.pattern !== undefined &&
          new RegExp(alternative.pattern).test(text),
      );
    for (const name of ['object-names', 'credentials', 'trigger', 'timestamp-mode', 'retry'])
      expect(allowsWhole(gcs.properties![name]!, '{{value}}'), name).toBe(true);
    expect(allowsWhole(gcs.properties!['object-names']!, 'logs/{{value}}')).toBe(false);
    expect(allowsWhole(schema.properties!.name!, '{{value}}')).toBe(false);
  });
});
