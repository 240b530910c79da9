import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { json } from '../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('the API edge', () => {
  it('answers the health check without authentication', async () => {
    const res = await t.request('/api/health');
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with the contract error body', async () => {
    const res = await t.request('/api/nope');
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: { code: 'not_found', message: 'no route for GET /api/nope' } });
  });

  it('refuses bodies over 1 MiB with 413', async () => {
    const res = await t.request('/api/health', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect((await json(res)).error.code).toBe('payload_too_large');
  });

  it('refuses bodies that are not JSON with 415', async () => {
    const res = await t.request('/api/health', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(res.status).toBe(415);
    expect(await json(res)).toEqual({
      error: {
        code: 'unsupported_media_type',
        message: 'Content-Type must be application/json, not text/plain',
      },
    });
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const ok = await t.request('/api/health', { headers: { 'x-request-id': 'req-12345678' } });
    expect(ok.headers.get('x-request-id')).toBe('req-12345678');
    const bad = await t.request('/api/health', { headers: { 'x-request-id': 'a b<script>' } });
    expect(bad.headers.get('x-request-id')).not.toBe('a b<script>');
  });

  it('publishes a valid OpenAPI 3.1 document of its routes', async () => {
    const res = await t.request('/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/health');
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });
});
