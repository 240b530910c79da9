/**
 * `{source}` in the gcs output's `object-name` is there so that a re-run overwrites what the
 * first run wrote. Time tokens filled from the clock (no `time-field`) give a re-run new
 * names, and an input other than gcs has no source object (names said `unknown-0-...`):
 * both were accepted without a word. They are refused at `output.gcs.object-name` by
 * `sluice job validate` (the real executable, FILE:line:col), by `sluice job run` when a
 * context value brings the tokens in, by the API on save (400, nothing stored) and on render.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsCollection } from '../../functions/jobs/store.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-source-names-'));

const GCS_INPUT =
  'input:\n  gcs:\n    bucket-name: acme-logs\n    credentials:\n      storage-url: gs://acme-logs\n    object-names: [in/]\n';
const POLL_INPUT = 'input:\n  http-poll:\n    url: https://example.org/s\n';
/** A job file; `object-name` is on line 11 (gcs input) or 8 (http-poll), its value at column 18. */
const yamlJob = (name: string, input: string, objectName: string, extra = '') =>
  `name: ${name}\n${input}output:\n  gcs:\n    bucket-name: acme-archive\n    object-name: '${objectName}'\n${extra}`;

const CLOCK = /output\.gcs\.object-name: .*%H %M %S.*time-field.*drop the time tokens/;
const NO_SOURCE = /output\.gcs\.object-name: .*http-poll.*drop \{source\}/;

const sluice = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['bin/sluice.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 15_000,
  });

describe('sluice job validate (the real executable)', () => {
  it('refuses {source} with time tokens from the clock at FILE:line:col of object-name (exit 1)', () => {
    const file = join(dir, 'clock.yaml');
    writeFileSync(file, yamlJob('clock', GCS_INPUT, 'out/%H%M%S/{source}-{part}.ndjson'));
    const r = sluice(['job', 'validate', file]);
    expect(r.status, r.stderr).toBe(1);
    const line = r.stderr.split('\n').find((l) => l.startsWith(`${file}:`));
    expect(line).toMatch(`${file}:11:18: `);
    expect(line).toMatch(CLOCK);
  });

  it('refuses {source} with an http-poll input at FILE:line:col of object-name (exit 1)', () => {
    const file = join(dir, 'poll.yaml');
    writeFileSync(file, yamlJob('poll', POLL_INPUT, 'out/{source}-{generation}-{part}.ndjson'));
    const r = sluice(['job', 'validate', file]);
    expect(r.status, r.stderr).toBe(1);
    const line = r.stderr.split('\n').find((l) => l.startsWith(`${file}:`));
    expect(line).toMatch(`${file}:8:18: `);
    expect(line).toMatch(NO_SOURCE);
  });

  it('accepts {source} with time tokens when time-field gives the time (exit 0)', () => {
    const file = join(dir, 'event-time.yaml');
    writeFileSync(
      file,
      yamlJob('event-time', GCS_INPUT, 'out/%Y/%m/%d/{source}-{part}.ndjson', '    time-field: ts\n'),
    );
    const r = sluice(['job', 'validate', file]);
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('sluice job run', () => {
  it('refuses time tokens that a context value brings into a {source} name, before reading anything', () => {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, yamlJob('run', GCS_INPUT, '{{prefix}}/{source}-{part}.ndjson'));
    const r = sluice(
      ['job', 'run', file, '--state-dir', join(dir, 'state'), '--context', 'prefix=out/%H%M%S'],
      // Nothing listens there: a run that is not refused fails on the bucket instead.
      { STORAGE_EMULATOR_HOST: 'http://127.0.0.1:9' },
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(`${file}:11:18: `);
    expect(r.stderr).toMatch(CLOCK);
  });
});

describe('the API', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await testApp();
    admin = bearer(await bootstrapTestAdmin(t));
    await t.request('/api/workers', jsonInit('POST', { id: 'w1' }, admin));
  });
  afterAll(() => t.close());

  const putYaml = (name: string, text: string) =>
    t.request(`/api/jobs/${name}`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: text,
    });

  it('refuses {source} with clock time tokens on save (400 at its line), and stores nothing', async () => {
    const res = await putYaml('clock', yamlJob('clock', GCS_INPUT, 'out/%H%M%S/{source}-{part}.ndjson'));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details).toEqual([
      {
        path: 'output.gcs.object-name',
        message: expect.stringMatching(/time-field.*drop the time tokens/),
        line: 11,
        column: 18,
      },
    ]);
    expect((await t.request('/api/jobs/clock', { headers: admin })).status).toBe(404);
  });

  it('refuses {source} with an http-poll input on save (JSON: 400 at its path), and stores nothing', async () => {
    const definition = {
      name: 'poll',
      input: { 'http-poll': { url: 'https://example.org/s' } },
      output: { gcs: { 'bucket-name': 'acme-archive', 'object-name': 'out/{source}-{part}.ndjson' } },
    };
    const res = await t.request('/api/jobs/poll', jsonInit('PUT', definition, admin));
    expect(res.status).toBe(400);
    expect((await json(res)).error.details).toEqual([
      { path: 'output.gcs.object-name', message: expect.stringMatching(/http-poll.*drop \{source\}/) },
    ]);
    expect((await t.request('/api/jobs/poll', { headers: admin })).status).toBe(404);
  });

  it('saves {source} with time tokens and time-field', async () => {
    const res = await putYaml(
      'event-time',
      yamlJob('event-time', GCS_INPUT, 'out/%Y/%m/%d/{source}-{part}.ndjson', '    time-field: ts\n'),
    );
    expect(res.status).toBe(201);
  });

  it('refuses to render a context value that brings clock time tokens into a {source} name', async () => {
    const res = await putYaml(
      'via-context',
      yamlJob('via-context', GCS_INPUT, '{{prefix}}/{source}-{part}.ndjson'),
    );
    expect(res.status).toBe(201);
    await t.request('/api/contexts/update-global', jsonInit('POST', { prefix: 'out/%Y%m%d%H' }, admin));
    const rendered = await t.request('/api/jobs/via-context/render?worker=w1', { headers: admin });
    expect(rendered.status).toBe(400);
    expect((await json(rendered)).error.details).toEqual([
      {
        path: 'output.gcs.object-name',
        message: expect.stringMatching(/^worker w1: .*time-field.*drop the time tokens/),
      },
    ]);
  });

  it('refuses to render a job stored before the rule ({source} with an http-poll input)', async () => {
    const plain = {
      name: 'stored-poll',
      input: { 'http-poll': { url: 'https://example.org/s' } },
      output: { gcs: { 'bucket-name': 'acme-archive', 'object-name': 'out/{part}.ndjson' } },
    };
    expect((await t.request('/api/jobs/stored-poll', jsonInit('PUT', plain, admin))).status).toBe(201);
    // As stored before the rule existed: straight into the job's record.
    const old = structuredClone(plain);
    old.output.gcs['object-name'] = 'out/{source}-{generation}-{part}.ndjson';
    await jobsCollection(await t.deps.clients.firestore(), 'default')
      .doc('stored-poll')
      .update({ definition_json: JSON.stringify(old) });
    const res = await t.request('/api/jobs/stored-poll/render?worker=w1', { headers: admin });
    expect(res.status).toBe(400);
    expect((await json(res)).error.details).toEqual([
      {
        path: 'output.gcs.object-name',
        message: expect.stringMatching(/^worker w1: .*http-poll.*drop \{source\} and \{generation\}/),
      },
    ]);
  });
});
