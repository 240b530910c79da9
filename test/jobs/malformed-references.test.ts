// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} and ${dyn|..} are literal job text here
/**
 * A malformed reference is refused when a job is saved (PUT, YAML or JSON: 400 with the
 * contract's error body, at the field and its line and column, nothing stored) and when it is
 * rendered (a context value that brings one in), and by `sluice job validate`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { json, jsonInit } from '../helpers/http.ts';

const yamlJob = (name: string, header: string) => `name: ${name}
input:
  http-poll:
    url: 'https://example.com/status'
    headers:
      authorization: '${header}'
output:
  print: {}
`;

const CASES: [string, RegExp][] = [
  ['{{ }}', /empty context reference/],
  ['Bearer {{a b}}', /`\{\{a b\}\}` is not a context reference/],
  ['Bearer {{unclosed', /opens a context reference that is not closed/],
  ['Bearer ${secret|a}', /is not a secret reference/],
  ['Bearer ${secrets|x/y}', /is not a runtime reference/],
  ['Bearer ${secret|a/b||fallback}', /a secret reference has no default form/],
];

describe('saving a job with a malformed reference', () => {
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

  it('answers 400 at the field, its line and column, and stores nothing (YAML and JSON)', async () => {
    for (const [i, [header, message]] of CASES.entries()) {
      const name = `bad-ref-${i}`;
      const res = await putYaml(name, yamlJob(name, header));
      expect(res.status, header).toBe(400);
      const body = await json(res);
      expect(body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) });
      expect(body.error.details).toEqual([
        {
          path: 'input.http-poll.headers.authorization',
          message: expect.stringMatching(message),
          line: 6,
          column: 22,
        },
      ]);
      const definition = {
        name,
        input: { 'http-poll': { url: 'https://example.com/', headers: { authorization: header } } },
        output: { print: {} },
      };
      const fromJson = await t.request(`/api/jobs/${name}`, jsonInit('PUT', definition, admin));
      expect(fromJson.status, header).toBe(400);
      expect((await json(fromJson)).error.details).toEqual([
        { path: 'input.http-poll.headers.authorization', message: expect.stringMatching(message) },
      ]);
      expect((await t.request(`/api/jobs/${name}`, { headers: admin })).status).toBe(404);
    }
  });

  it('still saves well-formed references and ordinary braces', async () => {
    const res = await putYaml(
      'good-refs',
      yamlJob('good-refs', 'Bearer ${secret|api/token} {{k}} \\{{ }} ${dyn|ENV||dev} a{2} ${HOME}'),
    );
    expect(res.status).toBe(201);
  });

  it('refuses to render a context value that brings one in', async () => {
    expect((await putYaml('via-context', yamlJob('via-context', 'Bearer {{token}}'))).status).toBe(201);
    await t.request(
      '/api/contexts/update-global',
      jsonInit('POST', { token: '${secrets|api/token}' }, admin),
    );
    const res = await t.request('/api/jobs/via-context/render?worker=w1', { headers: admin });
    expect(res.status).toBe(400);
    expect((await json(res)).error.details).toEqual([
      {
        path: 'input.http-poll.headers.authorization',
        message: expect.stringMatching(/worker w1: `\$\{secrets\|` is not a runtime reference/),
      },
    ]);
  });
});

describe('sluice job validate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-refs-'));

  it('prints FILE:LINE:COLUMN: path: message for each malformed reference and exits 1', async () => {
    for (const [i, [header, message]] of CASES.entries()) {
      const file = join(dir, `bad-${i}.yaml`);
      writeFileSync(file, yamlJob('bad', header));
      const r = await runCli(['job', 'validate', file]);
      expect(r.code, header).toBe(1);
      expect(r.stderr).toMatch(`${file}:6:22: input.http-poll.headers.authorization: `);
      expect(r.stderr).toMatch(message);
    }
  });

  it('exits 1 from the real executable, naming the line', () => {
    const file = join(dir, 'secret-fallback.yaml');
    writeFileSync(file, yamlJob('bad', 'Bearer ${secret|api/token||none}'));
    const r = spawnSync(process.execPath, ['bin/sluice.js', 'job', 'validate', file], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${file}:6:22: input.http-poll.headers.authorization: \`\${secret|api/token||…}\`: a secret reference has no default form`,
    );
    const good = join(dir, 'good.yaml');
    writeFileSync(good, yamlJob('good', 'Bearer ${secret|api/token} \\{{literal}} a{2}'));
    const ok = spawnSync(process.execPath, ['bin/sluice.js', 'job', 'validate', good], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
  });
});
