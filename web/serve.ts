/**
 * Serves the web UI from the local stack: the bundled assets under `/assets/`, and the
 * app's HTML for every page path (`PAGE_PATHS`, including `/api/docs`), with a
 * Content-Security-Policy that allows only our own script and styles (no inline script).
 * The bundle is built once, when `webUi()` is called.
 *
 * @example
 *   app.route('/', await webUi());
 */
import { Hono } from 'hono';
import { bundleWebUi, type WebAsset } from './bundle.ts';
import { PAGE_PATHS } from './src/routes.ts';

/** Also set on the cloud's static bucket (terraform/ui.tf); keep the two in step. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // Browsers ignore it over HTTP and for IP addresses (the local stack); behind a name, HTTPS only.
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
};

export async function webUi(assets?: Map<string, WebAsset>): Promise<Hono> {
  const files = assets ?? (await bundleWebUi());
  const html = files.get('/index.html');
  if (!html) throw new Error('the web UI bundle has no index.html');
  const app = new Hono();

  const send = (asset: WebAsset, ifNoneMatch: string | undefined) => {
    const headers = {
      ...SECURITY_HEADERS,
      'content-type': asset.contentType,
      'cache-control': 'no-cache',
      etag: asset.etag,
    };
    if (ifNoneMatch === asset.etag) return new Response(null, { status: 304, headers });
    return new Response(asset.body, { status: 200, headers });
  };

  app.get('/assets/*', (c) => {
    const asset = files.get(c.req.path);
    return asset ? send(asset, c.req.header('if-none-match')) : c.notFound();
  });
  for (const path of PAGE_PATHS) app.get(path, (c) => send(html, c.req.header('if-none-match')));
  return app;
}
