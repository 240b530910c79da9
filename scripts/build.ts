/**
 * `npm run build`: one deployable source archive per Cloud Function.
 *
 *   1. writes `functions/entry/<name>.ts` for every entry of functions/entry/table.ts
 *      (each imports only its own family) and removes generated entries that left the table;
 *   2. bundles each entry with esbuild into `dist/functions/<name>/index.js` (ESM, Node 20),
 *      keeping `@google-cloud/*` external: google-gax reads .proto files next to its own
 *      sources, which breaks when bundled (and parquet-wasm, which loads its .wasm file so);
 *   3. writes the archive's package.json (main, and the external packages the bundle
 *      imports as dependencies, pinned to the versions tested here) and zips both into
 *      `dist/functions/<name>.zip` with fixed timestamps, so an unchanged function gives
 *      a byte-identical archive and terraform leaves it alone;
 *   4. writes `dist/functions/manifest.json` (name, kind, archive, sha256, bytes);
 *   5. bundles the web UI into `dist/web/` (index.html, assets/), the static files that
 *      terraform/ui.tf uploads to the UI's bucket.
 *
 *   npm run build                 # everything
 *   npm run build -- --entries    # only regenerate functions/entry/*.ts
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { type Entry, entrySource, entryTable } from '../functions/entry/table.ts';
import { writeWebUi } from '../web/bundle.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const ENTRY_DIR = join(ROOT, 'functions/entry');
export const OUT_DIR = join(ROOT, 'dist/functions');
export const WEB_OUT_DIR = join(ROOT, 'dist/web');
const GENERATED_MARK = '// Generated from functions/entry/table.ts';
/** Always present: Cloud Functions loads the handler through it. */
const FUNCTIONS_FRAMEWORK = { '@google-cloud/functions-framework': '^3.4.0' };

export interface BuiltFunction {
  name: string;
  kind: Entry['kind'];
  archive: string;
  sha256: string;
  bytes: number;
  bundleBytes: number;
  dependencies: Record<string, string>;
}

/** Writes the generated entry modules; returns the paths it changed. */
export async function writeEntries(entries?: Entry[]): Promise<string[]> {
  const table = entries ?? (await entryTable());
  const changed: string[] = [];
  const wanted = new Set(table.map((e) => `${e.name}.ts`));
  for (const entry of table) {
    const file = join(ENTRY_DIR, `${entry.name}.ts`);
    const source = entrySource(entry);
    if (existsSync(file) && readFileSync(file, 'utf8') === source) continue;
    writeFileSync(file, source);
    changed.push(file);
  }
  for (const file of readdirSync(ENTRY_DIR)) {
    const path = join(ENTRY_DIR, file);
    if (!wanted.has(file) && readFileSync(path, 'utf8').startsWith(GENERATED_MARK)) {
      rmSync(path);
      changed.push(path);
    }
  }
  return changed;
}

export async function buildFunctions(outDir = OUT_DIR): Promise<BuiltFunction[]> {
  const entries = await entryTable();
  await writeEntries(entries);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: Object.fromEntries(entries.map((e) => [`${e.name}/index`, join(ENTRY_DIR, `${e.name}.ts`)])),
    outdir: outDir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    splitting: false,
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    metafile: true,
    // parquet-wasm loads its .wasm from next to its own sources (breaks when bundled);
    // apache-arrow is large and only loaded when a parquet object is read.
    external: ['@google-cloud/*', 'parquet-wasm', 'apache-arrow'],
    // CommonJS packages bundled into ESM still call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __sluiceRequire } from 'node:module'; const require = __sluiceRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  const built: BuiltFunction[] = [];
  for (const entry of entries) {
    const dir = join(outDir, entry.name);
    const dependencies = {
      ...FUNCTIONS_FRAMEWORK,
      ...externalDependencies(result.metafile, entry.name, outDir),
    };
    const pkg = {
      name: `sluice-${entry.name}`,
      private: true,
      type: 'module',
      main: 'index.js',
      engines: { node: '20' },
      dependencies,
    };
    const files: Record<string, string | Buffer> = {
      'index.js': readFileSync(join(dir, 'index.js')),
      'index.js.map': readFileSync(join(dir, 'index.js.map')),
      'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    };
    if (entry.kind === 'docs') files[`${entry.name}.json`] = await openApiDocument();
    for (const [file, content] of Object.entries(files))
      if (file !== 'index.js') writeFileSync(join(dir, file), content);
    const zip = zipFiles(files);
    const archive = join(outDir, `${entry.name}.zip`);
    writeFileSync(archive, zip);
    built.push({
      name: entry.name,
      kind: entry.kind,
      archive: relative(outDir, archive),
      sha256: createHash('sha256').update(zip).digest('hex'),
      bytes: zip.length,
      bundleBytes: files['index.js']!.length,
      dependencies,
    });
  }
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify({ functions: built }, null, 2)}\n`);
  return built;
}

/** The packages an output imports but does not contain, with the versions installed here. */
/** The OpenAPI document of the whole API, as the local stack serves it (functions/entry/document-function.ts). */
async function openApiDocument(): Promise<string> {
  const [{ createApp }, { ALL_FAMILIES }, { cloudDeps }, { createLogger }] = await Promise.all([
    import('../functions/app/create-app.ts'),
    import('../functions/families.ts'),
    import('../functions/entry/http-function.ts'),
    import('../functions/app/logger.ts'),
  ]);
  // The entries' own dependencies (clients stay unconnected), without the access-log line.
  const deps = { ...cloudDeps({}), logger: createLogger({ level: 'silent' }) };
  const response = await createApp(deps, ALL_FAMILIES).request('/api/openapi.json');
  if (!response.ok) throw new Error(`the OpenAPI document: HTTP ${response.status}`);
  return await response.text();
}

function externalDependencies(metafile: Metafile, name: string, outDir: string): Record<string, string> {
  const output = metafile.outputs[relative(ROOT, join(outDir, name, 'index.js'))];
  if (!output) throw new Error(`esbuild produced no output for ${name}`);
  const deps: Record<string, string> = {};
  for (const imp of output.imports) {
    if (!imp.external || imp.path.startsWith('node:') || builtinModules.includes(imp.path)) continue;
    const pkg = imp.path.startsWith('@')
      ? imp.path.split('/').slice(0, 2).join('/')
      : imp.path.split('/')[0]!;
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'));
    deps[pkg] = manifest.version;
  }
  return Object.fromEntries(Object.entries(deps).sort(([a], [b]) => a.localeCompare(b)));
}

import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

const DOS_TIME = 0; // 00:00:00
const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01

export function zipFiles(files: Record<string, string | Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const name of Object.keys(files).sort()) {
    const data = Buffer.from(files[name]!);
    const packed = deflateRawSync(data, { level: 9 });
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    locals.push(local, nameBytes, packed);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // -rw-r--r--
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--entries')) {
    for (const file of await writeEntries()) console.log(`wrote ${relative(ROOT, file)}`);
  } else {
    const started = performance.now();
    const built = await buildFunctions();
    for (const f of built) {
      const kb = (n: number) => `${(n / 1024).toFixed(0)} KiB`.padStart(9);
      console.log(
        `  ${f.name.padEnd(20)} ${f.kind.padEnd(6)} bundle ${kb(f.bundleBytes)}  archive ${kb(f.bytes)}  ${f.sha256.slice(0, 12)}`,
      );
    }
    const web = await writeWebUi(WEB_OUT_DIR);
    for (const asset of web) {
      const gzipped = gzipSync(asset.body, { level: 9 }).length;
      console.log(
        `  web${asset.path.padEnd(27)} ${String(asset.body.length).padStart(7)} bytes, ${gzipped} gzipped`,
      );
    }
    console.log(
      `built ${built.length} functions into ${relative(ROOT, OUT_DIR)}/ and the web UI into ${relative(ROOT, WEB_OUT_DIR)}/ in ${Math.round(performance.now() - started)} ms`,
    );
  }
}
