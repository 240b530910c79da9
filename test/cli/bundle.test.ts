/**
 * `sluice` runs from a bundle built on first use and rebuilt when a source changes
 * (bin/cli-bundle.js), in a scratch project so that the real cache is left alone. Each
 * load runs in a process of its own, as each `sluice` command does.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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

  it('builds for the real CLI: npm packages inside, but those that read files beside their sources', async () => {
    await build(resolve('.'));
    expect(isFresh(resolve('.'))).toBe(true);
    const code = readFileSync(bundlePaths(resolve('.')).bundle, 'utf8');
    const imported = new Set([...code.matchAll(/(?:from |import\()"([^"]+)"/g)].map((m) => m[1]!));
    // Bundled: nothing left to resolve and load one module at a time.
    for (const name of ['zod', 'yaml', 'commander', '@google-cloud/storage'])
      expect(imported.has(name), name).toBe(false);
    // Left out: Google's gRPC clients read their .proto files from beside their sources.
    expect(imported.has('@google-cloud/pubsub')).toBe(true);
  });
});
