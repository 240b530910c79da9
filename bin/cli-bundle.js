// How `sluice` starts fast without a build step. The CLI is TypeScript; through tsx a
// command took about 0.9 s to start, most of it transforming and resolving some seventy
// modules. So the first run bundles them with esbuild (about 0.1 s) into
// node_modules/.cache/sluice/, and later runs load that one file. Most npm packages are in
// the bundle too (EXTERNAL says which are not): one file to read and compile instead of
// some 450 modules to resolve and load made `sluice --help` about 0.07 s faster and
// `sluice job run` about 0.15 s. Bundled packages are still evaluated only when a command
// first imports them. Next to the bundle, a manifest records the modification time and
// size of every file it was built from; when any of them differs, or one is gone, the next
// run builds it again. SLUICE_CLI_FROM_SOURCE=1 skips the bundle (stack traces then point
// at the sources).
//
// The bundle is a CommonJS script, not an ES module, for one reason: V8's code cache. Node
// 20 caches no compiled ES module, and compiling the 4.9 MB bundle took 0.11-0.13 s of
// every command. A script compiled with `vm.Script` can be given the code V8 compiled the
// last time (`cachedData`). The first run of a command after a build writes its cache;
// later runs start from it (`sluice --help` 0.40 s -> 0.26 s, an empty `sluice job run`
// 0.60 s -> 0.41 s: medians of 7 alternating runs). There is one cache per command, since
// each holds the functions its command compiled. A cache belongs to one build (its file is
// named by the build's id, written in the bundle's first line); one that V8 refuses
// (another Node version, other V8 flags) is written again.
//
// In the script, `import()` is compiled to `require()`: V8 loses a script's dynamic-import
// callback when it comes from the code cache (nodejs/node#43663 and its kin).
//
// Plain JavaScript: this runs before anything can load TypeScript.
//
//   const { main } = await loadCli(root); // the exports of cli/main.ts
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

/** Changes whenever the way the bundle is built changes, so that old bundles are rebuilt. */
const BUILD_VERSION = 6;

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
 * Packages a bundled dependency loads with itself but calls only on a rare path: in the
 * bundle, each is evaluated when one of its exports is first read, not when its importer
 * is. Together they were about 27 ms of every command that loads the storage client
 * (`sluice job run` among them), measured by timing each bundled module's evaluation:
 *   - whatwg-url (17 ms, most of it tr46's mapping table): node-fetch's stand-in for a
 *     runtime without a URL class, read only as `Url.URL || whatwgUrl.URL`; Node has one;
 *   - html-entities (10 ms): the storage client decodes an error response's body with it.
 */
const LOADED_ON_FIRST_USE = ['whatwg-url', 'html-entities'];

/**
 * The esbuild plugin for LOADED_ON_FIRST_USE: an import of such a package resolves to a
 * module with a getter for each of the package's exports (listed by loading it here, at
 * build time) that `require()`s the package, which the bundle then evaluates on that first
 * read.
 */
const loadedOnFirstUse = {
  name: 'loaded-on-first-use',
  setup(build) {
    const names = LOADED_ON_FIRST_USE.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    build.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, async (args) => {
      if (args.pluginData?.real) return undefined;
      const real = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: { real: true },
      });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'loaded-on-first-use' };
    });
    build.onLoad({ filter: /.*/, namespace: 'loaded-on-first-use' }, async (args) => ({
      loader: 'js',
      resolveDir: join(args.path, '..'),
      contents: (await exportNames(args.path))
        .map(
          (name) =>
            `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: () => require(${JSON.stringify(args.path)})[${JSON.stringify(name)}] });`,
        )
        .join('\n'),
    }));
  },
};

/**
 * The names a module exports: a CommonJS module's `module.exports` keys (no `default`, so
 * an importer's `'default' in` test does not load it), an ES module's namespace keys. Read
 * on a thread of its own, so that loading the package here leaves this process (which runs
 * the bundle next) as it was.
 */
async function exportNames(path) {
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(EXPORT_NAMES_THREAD, { eval: true, workerData: path, execArgv: [] });
  return await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const EXPORT_NAMES_THREAD = `
const { parentPort, workerData: path } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');
(async () => {
  try {
    return Object.keys(createRequire(path)(path));
  } catch (err) {
    if (err.code !== 'ERR_REQUIRE_ESM') throw err;
    return Object.keys(await import(pathToFileURL(path).href));
  }
})().then((names) => parentPort.postMessage(names));
`;

/** The script's parameters: CommonJS's five, and the URL `createRequire(import.meta.url)` gets. */
const WRAPPER_PARAMS = 'exports, require, module, __filename, __dirname, __sluiceBundleUrl';
const BUILD_ID_LINE = /^\/\/ sluice build (\S+)\n/;

/** The bundle and its manifest for the project at `root`. */
export function bundlePaths(root) {
  const dir = join(root, 'node_modules', '.cache', 'sluice');
  return { dir, bundle: join(dir, 'cli.cjs'), manifest: join(dir, 'cli.inputs.json') };
}

/**
 * Where the code cache of the build `id` for a command is kept. One per command (`job run`,
 * `--help`): each holds the functions its command compiled, which are most of its start.
 */
function codeCachePath(dir, id, argv) {
  const words = [];
  for (const arg of argv.slice(2)) {
    if (!/^[a-z][a-z-]*$/.test(arg) || words.length === 2) break;
    words.push(arg);
  }
  return join(dir, `cli.${id}.${words.join('-') || 'sluice'}.v8cache`);
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
  const { outputFiles, metafile, warnings } = await esbuild({
    stdin: { contents: "export * from './cli/main.ts';", resolveDir: root, loader: 'ts' },
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: EXTERNAL,
    plugins: [loadedOnFirstUse],
    // import() becomes require(): the code cache would lose its callback (see the top).
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__sluiceBundleUrl' },
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  // esbuild escapes non-ASCII characters in strings (its default `charset: 'ascii'`) but
  // keeps them in comments and some regular expressions, and one is enough for V8 to hold
  // the whole source (4.9 MB) as a two-byte string, slower to read and scan: `sluice --help`
  // took 263 ms against 239 ms once the bundle was ASCII (medians of 8 alternating runs).
  // A \u escape means the same character in a regular expression, and is text in a comment.
  const source = outputFiles[0].text.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  // In one file, `import.meta.url` would name the bundle, not the module that asks; only
  // resolving packages from it is right (node_modules is above the bundle as above the
  // source). Any other part of import.meta is empty in a script: esbuild warns of it.
  if (
    warnings.some((w) => w.text.includes('import.meta')) ||
    source.replaceAll(/createRequire\)?\(__sluiceBundleUrl\)/g, '').includes('__sluiceBundleUrl')
  )
    throw new Error('a bundled module uses import.meta');
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const code = `// sluice build ${id}\n(function (${WRAPPER_PARAMS}) {${source}\n})`;
  const inputs = {};
  for (const path of Object.keys(metafile.inputs)) {
    // The entry, and the modules loadedOnFirstUse makes (the package's own files are inputs too).
    if (path.startsWith('<stdin>') || path.startsWith('loaded-on-first-use:')) continue;
    const stat = statSync(join(root, path));
    inputs[path] = [stat.mtimeMs >= started ? -1 : stat.mtimeMs, stat.size];
  }
  mkdirSync(dir, { recursive: true });
  const suffix = `.${process.pid}.tmp`;
  writeFileSync(bundle + suffix, code);
  renameSync(bundle + suffix, bundle);
  writeFileSync(manifest + suffix, JSON.stringify({ version: BUILD_VERSION, inputs }));
  renameSync(manifest + suffix, manifest);
  // Code caches of earlier builds, and the ES module bundle of earlier versions: never used again.
  for (const name of readdirSync(dir))
    if ((name.endsWith('.v8cache') && !name.startsWith(`cli.${id}.`)) || name === 'cli.mjs')
      rmSync(join(dir, name), { force: true });
}

/**
 * Compiles and runs the bundle, from V8's code cache when there is one for this build;
 * without one (or when V8 refuses it), writes one once the command is done, when the
 * functions it ran are compiled too.
 */
function runBundle(bundle) {
  // Read as latin1, which is the same text for a file that build() made ASCII and skips
  // UTF-8's decoding: 1.5-9 ms against 18-19 ms for the 4.9 MB bundle.
  const text = readFileSync(bundle, 'latin1');
  const id = BUILD_ID_LINE.exec(text)?.[1];
  if (!id) throw new Error(`${bundle} has no build id`);
  const cachePath = codeCachePath(join(bundle, '..'), id, process.argv);
  let cachedData;
  try {
    cachedData = readFileSync(cachePath);
  } catch {
    // None yet: written below.
  }
  const script = new Script(text, { filename: bundle, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once('beforeExit', () => {
      try {
        const temporary = `${cachePath}.${process.pid}.tmp`;
        writeFileSync(temporary, script.createCachedData());
        renameSync(temporary, cachePath);
      } catch {
        // A cache that cannot be written: the next run compiles again.
      }
    });
  }
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    join(bundle, '..'),
    pathToFileURL(bundle).href,
  );
  return module.exports;
}

/** The exports of cli/main.ts: from the bundle when it can be, else from the sources. */
export async function loadCli(root) {
  if (process.env.SLUICE_CLI_FROM_SOURCE !== '1') {
    try {
      if (!isFresh(root)) await build(root);
      return runBundle(bundlePaths(root).bundle);
    } catch {
      // No esbuild, a cache that cannot be written, or a bundle that does not load: run
      // the sources, which also shows any real error in the code the way it is written.
    }
  }
  const { register } = await import('tsx/esm/api');
  register();
  return await import(pathToFileURL(join(root, 'cli', 'main.ts')).href);
}
