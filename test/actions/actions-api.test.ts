/**
 * Issue 21: a CEL syntax or type error is a 400 from the API, pointing into the expression,
 * and the job is not saved; the same job saved with a correct expression is accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  await t.close();
});

const job = (filter: string) =>
  `name: cel-job\ninput:\n  http-poll:\n    url: http://example.com/\n    json: true\nactions:\n  - filter: "${filter}"\noutput:\n  print: {}\n`;

const put = (yaml: string) =>
  t.request('/api/jobs/cel-job', {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: yaml,
  });

describe('actions through the API', () => {
  it('answers 400 for a CEL syntax error, naming the action and the place in the expression', async () => {
    const res = await put(job('event.level == '));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe('invalid_request');
    // Line 7 of the YAML holds the filter; its expression starts at column 14, and the
    // error is where it ends too early, after 15 characters.
    expect(body.error.details).toEqual([
      {
        path: 'actions.0.filter',
        line: 7,
        column: 14 + 15,
        message: 'CEL syntax error: Unexpected token: EOF (character 16 of the expression)',
      },
    ]);
    expect((await t.request('/api/jobs/cel-job', { headers: admin })).status).toBe(404);
  });

  it('answers 400 for a type error: a filter that is not a bool', async () => {
    const res = await put(job('event.size + 1'));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.details).toEqual([
      expect.objectContaining({ path: 'actions.0.filter', line: 7, message: expect.stringMatching(/bool/) }),
    ]);
    expect((await t.request('/api/jobs/cel-job', { headers: admin })).status).toBe(404);
  });

  it('saves the job once the expression is right', async () => {
    expect((await put(job("event.level == 'error'"))).status).toBe(201);
  });
});
