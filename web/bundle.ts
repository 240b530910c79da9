/**
 * Bundles the web UI with esbuild into a handful of static files: `index.html`,
 * `assets/app.js` (Preact app, minified ESM), `assets/app.css` and `assets/favicon.svg`.
 * The local stack bundles in memory when it starts (no build step, nothing written);
 * `npm run build` writes the same files to `dist/web/` for the cloud's static bucket.
 *
 * @example
 *   const assets = await bundleWebUi();
 *   assets.get('/assets/app.js')?.body.length;
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const WEB_DIR = dirname(fileURLToPath(import.meta.url));

export interface WebAsset {
  /** URL path, e.g. `/assets/app.js`; the HTML is `/index.html`. */
  path: string;
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  /** Strong validator for conditional requests. */
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export async function bundleWebUi(): Promise<Map<string, WebAsset>> {
  const outdir = join(WEB_DIR, '.out'); // never written: write is false
  const result = await build({
    entryPoints: { app: join(WEB_DIR, 'src/main.tsx') },
    outdir,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const assets = new Map<string, WebAsset>();
  const add = (path: string, body: Uint8Array) => {
    const ext = path.slice(path.lastIndexOf('.'));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(path, {
      path,
      body: new Uint8Array(body),
      contentType: TYPES[ext] ?? 'application/octet-stream',
      etag,
    });
  };
  for (const file of result.outputFiles) add(`/assets/${file.path.slice(outdir.length + 1)}`, file.contents);
  add('/index.html', readFileSync(join(WEB_DIR, 'index.html')));
  add('/assets/favicon.svg', readFileSync(join(WEB_DIR, 'favicon.svg')));
  return assets;
}

/** Writes the bundle as static files (the cloud bucket's content); returns the assets written. */
export async function writeWebUi(outDir: string): Promise<WebAsset[]> {
  const assets = [...(await bundleWebUi()).values()];
  rmSync(outDir, { recursive: true, force: true });
  for (const asset of assets) {
    const file = join(outDir, asset.path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, asset.body);
  }
  return assets;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = resolve(process.argv[2] ?? join(WEB_DIR, '../dist/web'));
  for (const asset of await writeWebUi(outDir))
    console.log(`  ${asset.path.padEnd(22)} ${asset.body.length} bytes`);
}
