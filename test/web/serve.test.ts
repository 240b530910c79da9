import { describe, expect, it } from 'vitest';
import { bundleWebUi } from '../../web/bundle.ts';
import { CONTENT_SECURITY_POLICY, webUi } from '../../web/serve.ts';
import { matchPage, PAGE_PATHS } from '../../web/src/routes.ts';

const assets = await bundleWebUi();
const app = await webUi(assets);

describe('serving the web UI', () => {
  it('answers every page path with the app HTML and a CSP that forbids inline script', async () => {
    for (const path of [
      '/',
      '/context',
      '/workers',
      '/workers/local',
      '/jobs/a.b-c',
      '/events',
      '/login',
      '/api/docs',
    ]) {
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      const html = await res.text();
      expect(html).toContain('<script type="module" src="/assets/app.js"></script>');
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    }
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
  });

  it('serves the bundle with its types, revalidated by ETag', async () => {
    const js = await app.request('/assets/app.js');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('no-cache');
    const again = await app.request('/assets/app.js', {
      headers: { 'if-none-match': js.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
    expect((await app.request('/assets/app.css')).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    expect((await app.request('/assets/nope.js')).status).toBe(404);
  });

  it('keeps the bundle small', () => {
    const js = assets.get('/assets/app.js')!.body.length;
    const css = assets.get('/assets/app.css')!.body.length;
    expect(js).toBeLessThan(100 * 1024);
    expect(css).toBeLessThan(20 * 1024);
  });

  it('matches each page path in the browser router', () => {
    expect(PAGE_PATHS.map((p) => matchPage(p.replace(/:[^/]+/g, 'x'))?.page)).toEqual([
      'context',
      'context',
      'workers',
      'worker',
      'jobs',
      'job',
      'events',
      'login',
      'docs',
    ]);
    expect(matchPage('/jobs/a%20b')).toEqual({ page: 'job', param: 'a b' });
    expect(matchPage('/nowhere')).toBeUndefined();
  });
});
