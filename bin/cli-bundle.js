// How `sluice` starts fast without a build step. The CLI is TypeScript; through tsx a
// command took about 0.9 s to start, most of it transforming and resolving some seventy
// modules. So the first run bundles them with esbuild (about 0.1 s) into
// node_modules/.cache/sluice/, and later runs load that one file (about 0.35 s). Most npm
// packages are in the bundle too (EXTERNAL says which are not): one file to read and
// compile instead of some 450 modules to resolve and load made `sluice --help` about
// 0.07 s faster and `sluice job run` about 0.15 s. Bundled packages are still evaluated
// only when a command first imports them. Next to the bundle, a manifest records the
// modification time and size of every file it was built from; when any of them differs,
// or one is gone, the next run builds it again. SLUICE_CLI_FROM_SOURCE=1 skips the bundle (stack traces then point at the sources).
//
// Plain JavaScript: this runs before anything can load TypeScript.
//
//   const { main } = await loadCli(root); // the exports of cli/main.ts
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Changes whenever the way the bundle is built changes, so that old bundles are rebuilt. */
const BUILD_VERSION = 2;

/**
 * Packages left out of the bundle, loaded from node_modules when a command needs them: those
 * that read files beside their own sources (Google's gRPC clients their .proto files,
 * parquet-wasm its .wasm), the large ones only a few commands load (undici for API
 * requests, apache-arrow for parquet), and the build tools.
 */
const EXTERNAL = [
  '@google-cloud/firestore',
  '@google-cloud/pubsub',
  'google-gax',
  'parquet-wasm',
  'apache-arrow',
  'undici',
  'esbuild',
  'tsx',
];

/**
 * Bundled CommonJS packages call require() for Node's built-ins; in an ES module it is made
 * from the bundle's own URL (packages resolve from there as from the sources).
 */
const REQUIRE_BANNER =
  "import { createRequire as __sluiceRequire } from 'node:module'; const require = __sluiceRequire(import.meta.url);\n";

/** The bundle and its manifest for the project at `root`. */
export function bundlePaths(root) {
  const dir = join(root, 'node_modules', '.cache', 'sluice');
  return { dir, bundle: join(dir, 'cli.mjs'), manifest: join(dir, 'cli.inputs.json') };
}

/** Whether the bundle was built, the same way, from the files as they are now. */
export function isFresh(root) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(bundlePaths(root).manifest, 'utf8'));
  } catch {
    return false;
  }
  if (manifest.version !== BUILD_VERSION) return false;
  for (const [path, [mtimeMs, size]] of Object.entries(manifest.inputs)) {
    let stat;
    try {
      stat = statSync(join(root, path));
    } catch {
      return false;
    }
    if (stat.mtimeMs !== mtimeMs || stat.size !== size) return false;
  }
  return true;
}

/**
 * Bundles `cli/main.ts` and what it imports from the project. A file saved while esbuild
 * runs is recorded as changed, so the next run builds again. Bundle and manifest are each
 * written to a temporary file and renamed into place, so runs that build at the same time
 * never read half a file.
 */
export async function build(root) {
  const { build: esbuild } = await import('esbuild');
  const { dir, bundle, manifest } = bundlePaths(root);
  const started = Date.now();
  const { outputFiles, metafile } = await esbuild({
    stdin: { contents: "export * from './cli/main.ts';", resolveDir: root, loader: 'ts' },
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const source = Buffer.from(outputFiles[0].contents).toString();
  // In one file, `import.meta.url` would name the bundle, not the module that asks; only
  // resolving packages from it is right (node_modules is above the bundle as above the source).
  if (source.replaceAll('createRequire(import.meta.url)', '').includes('import.meta'))
    throw new Error('a bundled module uses import.meta');
  const code = REQUIRE_BANNER + source;
  const inputs = {};
  for (const path of Object.keys(metafile.inputs)) {
    if (path.startsWith('<stdin>')) continue;
    const stat = statSync(join(root, path));
    inputs[path] = [stat.mtimeMs >= started ? -1 : stat.mtimeMs, stat.size];
  }
  mkdirSync(dir, { recursive: true });
  const suffix = `.${process.pid}.tmp`;
  writeFileSync(bundle + suffix, code);
  renameSync(bundle + suffix, bundle);
  writeFileSync(manifest + suffix, JSON.stringify({ version: BUILD_VERSION, inputs }));
  renameSync(manifest + suffix, manifest);
}

/** The exports of cli/main.ts: from the bundle when it can be, else from the sources. */
export async function loadCli(root) {
  if (process.env.SLUICE_CLI_FROM_SOURCE !== '1') {
    try {
      if (!isFresh(root)) await build(root);
      return await import(pathToFileURL(bundlePaths(root).bundle).href);
    } catch {
      // No esbuild, a cache that cannot be written, or a bundle that does not load: run
      // the sources, which also shows any real error in the code the way it is written.
    }
  }
  const { register } = await import('tsx/esm/api');
  register();
  return await import(pathToFileURL(join(root, 'cli', 'main.ts')).href);
}
