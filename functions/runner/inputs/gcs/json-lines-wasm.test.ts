/**
 * The committed WebAssembly is what its AssemblyScript source compiles to, so that a
 * change to the source cannot be left out of what runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileJsonLines, JSON_LINES_MODULE, renderedWasmModule } from '../../../../scripts/build-wasm.ts';

describe('json-lines.wasm.ts', () => {
  it('matches assembly/json-lines.ts (run `npm run build:wasm` after changing it)', async () => {
    expect(readFileSync(JSON_LINES_MODULE, 'utf8')).toBe(renderedWasmModule(await compileJsonLines()));
  }, 30_000);
});
