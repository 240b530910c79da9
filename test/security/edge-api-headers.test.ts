/**
 * Every API answer tells a browser to keep it to itself: not to sniff a JSON or YAML answer
 * into HTML (a job's YAML can hold `<script>` an operator wrote), not to cache what a
 * token read, and to reach the API over HTTPS only from the first answer on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';

let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(() => t.close());

describe('API answers', () => {
  it('carry nosniff, no-store and HSTS, on success, on YAML and on errors', async () => {
    await t.request('/api/jobs/page', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: 'name: page\ninput:\n  http-poll:\n    url: https://example.test/<script>alert(1)</script>\noutput:\n  print: {}\n',
    });
    const answers = [
      await t.request('/api/jobs', { headers: admin }),
      await t.request('/api/jobs/page', { headers: { ...admin, accept: 'application/yaml' } }),
      await t.request('/api/jobs'),
      await t.request('/api/no-such-route', { headers: admin }),
    ];
    for (const res of answers) {
      const where = `${res.url} ${res.status}`;
      expect(res.headers.get('x-content-type-options'), where).toBe('nosniff');
      expect(res.headers.get('cache-control'), where).toBe('no-store');
      expect(res.headers.get('strict-transport-security'), where).toMatch(/^max-age=\d{7,}/);
    }
  });
});
