/**
 * parquet-wasm for the read threads. The main thread compiles its WebAssembly once per
 * process (`parquetWasmModule`) and posts the module with each parquet task; a thread
 * instantiates it once (`parquetModulesFor`) with the library's ES module build and
 * apache-arrow, both bundled into the thread's script (scripts/build-workers.ts), as the
 * thread can load nothing from node_modules.
 *
 * @example
 *   const module = await parquetWasmModule(); // main thread
 *   const { ParquetFile, arrow } = await parquetModulesFor(module); // read thread
 */
import type { ParquetModules } from '../inputs/gcs/parquet.ts';

let compiled: Promise<WebAssembly.Module> | undefined;

export function parquetWasmModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const [{ createRequire }, { readFile }] = await Promise.all([
      import('node:module'),
      import('node:fs/promises'),
    ]);
    // Resolved from this module's place: node_modules is above it from the sources, the
    // CLI's bundle (node_modules/.cache/sluice) and a function's bundle alike.
    const path = createRequire(import.meta.url).resolve('parquet-wasm/esm/parquet_wasm_bg.wasm');
    return WebAssembly.compile(await readFile(path));
  })();
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

let instantiated: Promise<ParquetModules> | undefined;

export function parquetModulesFor(module: WebAssembly.Module): Promise<ParquetModules> {
  // Each task brings its own copy of the module (posted), all of the one the process
  // compiled: the first instantiates it, for the thread's life.
  instantiated ??= Promise.all([import('parquet-wasm/esm'), import('apache-arrow')]).then(([wasm, arrow]) => {
    wasm.initSync({ module });
    return { ParquetFile: wasm.ParquetFile, arrow };
  });
  return instantiated;
}
