/**
 * `sluice` runs from a bundle built on first use and rebuilt when a source changes
 * (bin/cli-bundle.js), in a scratch project so that the real cache is left alone. Each
 * load runs in a process of its own, as each `sluice` command does.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build, bundlePaths, isFresh } from '../../bin/cli-bundle.js';

const loader = resolve('bin/cli-bundle.js');
const root = mkdtempSync(join(tmpdir(), 'sluice-bundle-'));
mkdirSync(join(root, 'cli'));
mkdirSync(join(root, 'node_modules'));
writeFileSync(join(root, 'package.json'), '{"type":"module"}');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const write = (file: string, text: string) => writeFileSync(join(root, 'cli', file), text);
write('main.ts', "import { word } from './word.ts';\nexport const main = (): string => word;\n");

/** What `main()` returns when the CLI is loaded the way bin/sluice.js loads it. */
function run(env: NodeJS.ProcessEnv = {}): string {
  const script = `const { loadCli } = await import(${JSON.stringify(loader)}); console.log((await loadCli(${JSON.stringify(root)})).main());`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  }).trim();
}

describe('the sluice CLI bundle', () => {
  it('is built on first use and used while the sources stay as they are', () => {
    write('word.ts', "export const word: string = 'one';\n");
    expect(existsSync(bundlePaths(root).bundle)).toBe(false);
    expect(run()).toBe('one');
    expect(existsSync(bundlePaths(root).bundle)).toBe(true);
    expect(isFresh(root)).toBe(true);
  });

  it('is built again when a source changes, even to an older time and the same size', () => {
    write('word.ts', "export const word: string = 'two';\n");
    expect(isFresh(root)).toBe(false);
    expect(run()).toBe('two');
    write('word.ts', "export const word: string = 'six';\n");
    utimesSync(join(root, 'cli', 'word.ts'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    expect(isFresh(root)).toBe(false);
    expect(run()).toBe('six');
    expect(isFresh(root)).toBe(true);
  });

  it('is ASCII, comments included, with non-ASCII strings as they were', () => {
    write(
      'word.ts',
      // esbuild keeps a comment inside an expression and a regular expression's µ, and escapes the string.
      "export const word: string = String(\n  // an arrow → and an ellipsis …\n  'naïve → ✓ 😀',\n) + (/^[0-9]+(µs|ms)$/.test('5µs') ? ' µs' : ' lost');\n",
    );
    expect(run()).toBe('naïve → ✓ 😀 µs');
    expect(readFileSync(bundlePaths(root).bundle).every((byte) => byte < 0x80)).toBe(true);
  });

  it('is skipped with SLUICE_CLI_FROM_SOURCE=1, and when a module uses import.meta', () => {
    write('word.ts', "export const word: string = 'ten';\n");
    expect(run({ SLUICE_CLI_FROM_SOURCE: '1' })).toBe('ten');
    expect(isFresh(root)).toBe(false);
    write(
      'word.ts',
      "export const word: string = import.meta.url.endsWith('word.ts') ? 'own url' : 'bundle url';\n",
    );
    expect(run()).toBe('own url');
    expect(isFresh(root)).toBe(false);
  });

  it('is built with createRequire(import.meta.url): packages resolve from the bundle as from the source', () => {
    mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'dep', 'package.json'), '{"name":"dep","main":"index.js"}');
    writeFileSync(join(root, 'node_modules', 'dep', 'index.js'), '');
    write(
      'word.ts',
      "import { createRequire } from 'node:module';\nexport const word: string = createRequire(import.meta.url).resolve('dep').endsWith('/node_modules/dep/index.js') ? 'found' : 'lost';\n",
    );
    expect(run()).toBe('found');
    expect(isFresh(root)).toBe(true);
  });

  /** A package in the scratch project that notes in globalThis when it is evaluated. */
  const fixturePackage = (name: string, type: 'module' | 'commonjs', source: string) => {
    const dir = join(root, 'node_modules', name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type, main: 'index.js' }));
    writeFileSync(join(dir, 'index.js'), source);
  };
  const LOADED =
    'const loaded = (name: string): string => String((globalThis as Record<string, unknown>)[name] === true);\n';

  it('evaluates an ES module package loaded on first use (html-entities) when an export is first read', () => {
    fixturePackage(
      'html-entities',
      'module',
      "globalThis.entities = true;\nexport const decode = (text) => text.replaceAll('&amp;', '&');\nexport const escapeText = (text) => text.replaceAll('&', '&amp;');\n",
    );
    write(
      'word.ts',
      `import * as entities from 'html-entities';\n${LOADED}const atStart = loaded('entities');\nexport const word: string = [atStart, entities.decode('a &amp; b'), entities.escapeText('c & d'), loaded('entities')].join(' ');\n`,
    );
    expect(run()).toBe('false a & b c &amp; d true');
    expect(isFresh(root)).toBe(true);
  });

  it("leaves a CommonJS package loaded on first use (whatwg-url) unloaded by an importer's `'default' in` test", () => {
    fixturePackage(
      'whatwg-url',
      'commonjs',
      'globalThis.whatwg = true;\nexports.URL = class FallbackURL {};\n',
    );
    // As node-fetch takes it: esbuild's interop asks `'default' in`, then only reads URL if Node had none.
    write(
      'word.ts',
      `import whatwgUrl from 'whatwg-url';\n${LOADED}const URLClass = globalThis.URL || whatwgUrl.URL;\nconst before = loaded('whatwg');\nexport const word: string = [URLClass === globalThis.URL, before, whatwgUrl.URL.name, loaded('whatwg')].join(' ');\n`,
    );
    expect(run()).toBe('true false FallbackURL true');
  });

  it('builds for the real CLI: npm packages inside, but those that read files beside their sources', async () => {
    await build(resolve('.'));
    expect(isFresh(resolve('.'))).toBe(true);
    const code = readFileSync(bundlePaths(resolve('.')).bundle, 'utf8');
    const imported = new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]!));
    // Bundled: nothing left to resolve and load one module at a time.
    for (const name of ['zod', 'yaml', 'commander', '@google-cloud/storage'])
      expect(imported.has(name), name).toBe(false);
    // Left out: Google's gRPC clients read their .proto files from beside their sources.
    expect(imported.has('@google-cloud/pubsub')).toBe(true);
  });

  describe("V8's code cache", () => {
    const caches = () =>
      readdirSync(bundlePaths(root).dir)
        .filter((name) => name.endsWith('.v8cache'))
        .map((name) => join(bundlePaths(root).dir, name));

    it('is written by the first run of a build and used, unchanged, by the next', () => {
      write('word.ts', "export const word: string = 'cached';\n");
      expect(run()).toBe('cached');
      const [cache, ...more] = caches();
      expect(more).toEqual([]);
      const written = readFileSync(cache!);
      expect(written.length).toBeGreaterThan(0);
      const { mtimeMs } = statSync(cache!);
      expect(run()).toBe('cached');
      // Accepted by V8, so not written again.
      expect(statSync(cache!).mtimeMs).toBe(mtimeMs);
      expect(readFileSync(cache!).equals(written)).toBe(true);
    });

    it('is refused when damaged, and written again', () => {
      const [cache] = caches();
      writeFileSync(cache!, Buffer.alloc(4096, 7));
      expect(run()).toBe('cached');
      expect(readFileSync(cache!).equals(Buffer.alloc(4096, 7))).toBe(false);
    });

    it('belongs to one build: a new build removes the caches of the old', () => {
      const [old] = caches();
      write('word.ts', "export const word: string = 'rebuilt';\n");
      expect(run()).toBe('rebuilt');
      expect(existsSync(old!)).toBe(false);
      expect(caches()).toHaveLength(1);
      expect(run()).toBe('rebuilt');
    });

    it("keeps import() of a package left out of the bundle working from the cache (V8 drops the script's import callback)", () => {
      // A stand-in named like an EXTERNAL package, so that the bundle loads it at run time.
      mkdirSync(join(root, 'node_modules', 'undici'), { recursive: true });
      writeFileSync(
        join(root, 'node_modules', 'undici', 'package.json'),
        '{"name":"undici","main":"index.js"}',
      );
      writeFileSync(join(root, 'node_modules', 'undici', 'index.js'), "exports.word = 'imported';\n");
      write('main.ts', "export const main = async (): Promise<string> => (await import('undici')).word;\n");
      const script = `const { loadCli } = await import(${JSON.stringify(loader)}); console.log(await (await loadCli(${JSON.stringify(root)})).main());`;
      const runAsync = () =>
        execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim();
      expect(runAsync()).toBe('imported');
      expect(caches()).toHaveLength(1);
      expect(runAsync()).toBe('imported');
      write('main.ts', "import { word } from './word.ts';\nexport const main = (): string => word;\n");
    });
  });
});
