/**
 * The OpenAPI document covers every route the API serves: each handler the app has
 * registered under /api (middleware aside) appears in GET /api/openapi.json with its
 * method. A route added with a plain `routes.get(...)` instead of `createRoute` fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('the OpenAPI document', () => {
  it('describes every route the API serves', async () => {
    const doc = (await (await t.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    // The document itself is the one route it does not list.
    const served = new Set(
      t.app.routes
        .filter((r) => r.method !== 'ALL' && r.path.startsWith('/api/') && !r.path.includes('*'))
        .filter((r) => r.path !== '/api/openapi.json')
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    expect(served.size).toBeGreaterThan(40);
    const missing = [...served].filter((route) => {
      const [method, path] = route.split(' ');
      return !doc.paths[path!]?.[method!];
    });
    expect(missing).toEqual([]);
  });
});
