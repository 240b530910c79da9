/**
 * A job's regular expressions cannot hold the API while they compile. re2js expands
 * counted repetitions when it compiles: `(?:a{0,999}c)|` repeated 699 times (10 KB, under
 * re2js's own limit) took about 6 s and a gigabyte of heap, and an operator's 20 KB job
 * with two such patterns held the API's event loop for 13 s before it was saved (a 448 MiB
 * heap ran out of memory on one). Such a pattern is refused before it is compiled, and so
 * are patterns that are each small enough but too many together; nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REGEX_SIZE } from '../../shared/regex.ts';
import { regexSize } from '../../shared/regex-size.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, tokenFor } from '../helpers/auth.ts';
import { json } from '../helpers/http.ts';

let t: TestApp;
let operator: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  operator = bearer(await tokenFor(t, { role: 'operator' }));
});
afterAll(() => t.close());

function gcsJob(name: string, patterns: string[]) {
  return {
    name,
    input: {
      gcs: {
        'bucket-name': 'regex-bucket',
        credentials: { 'storage-url': 'gs://regex-bucket' },
        'object-names': [],
        'include-regex': patterns,
      },
    },
    output: { print: {} },
  };
}

const put = (name: string, body: unknown) =>
  t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...operator, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('saving a job whose patterns are costly to compile', () => {
  it('refuses a pattern that expands past the limit, before compiling it, and stores nothing', async () => {
    const patterns = ['x', 'y'].map((tail) => `${'(?:a{0,999}c)|'.repeat(699)}${tail}`);
    const res = await put('redos', gcsJob('redos', patterns));
    expect(res.status).toBe(400);
    const { error } = await json(res);
    expect(error.code).toBe('invalid_request');
    expect(error.details).toContainEqual({
      path: 'input.gcs.include-regex.0',
      message: expect.stringMatching(
        /too large: its repetitions expand to about [\d,]+ steps, more than 2,000/,
      ),
    });
    expect((await t.request('/api/jobs/redos', { headers: operator })).status).toBe(404);
  });

  it('refuses patterns each within the limit but too many together', async () => {
    // Distinct patterns, so that none is already compiled.
    const patterns = Array.from({ length: 40 }, (_, i) => `t${i}-[a-z0-9]{0,900}`);
    expect(regexSize(patterns[0]!)).toBeLessThanOrEqual(MAX_REGEX_SIZE);
    const res = await put('many-patterns', gcsJob('many-patterns', patterns));
    expect(res.status).toBe(400);
    const { error } = await json(res);
    expect(JSON.stringify(error.details)).toContain('patterns together are too large');
    expect((await t.request('/api/jobs/many-patterns', { headers: operator })).status).toBe(404);
  });

  it('still saves a job with ordinary patterns', async () => {
    const res = await put('ordinary', gcsJob('ordinary', ['^logs/\\d{4}/\\d{2}/', '\\.json(\\.gz)?$']));
    expect(res.status).toBe(201);
  });
});
