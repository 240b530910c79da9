/**
 * The parquet decoder as the main thread loads it: parquet-wasm's Node build (it compiles
 * its WebAssembly from node_modules) and apache-arrow, on the first parquet object. A read
 * thread loads its own (runner/cores/parquet-wasm.ts); this module stays out of its script.
 *
 * @example
 *   for await (const slice of parquetRows(file, nodeParquetModules)) deliver(slice.rows());
 */
import type { ParquetModules } from './parquet.ts';

export async function nodeParquetModules(): Promise<ParquetModules> {
  const [{ ParquetFile, wasmMemory }, arrow] = await Promise.all([
    import('parquet-wasm'),
    import('apache-arrow'),
  ]);
  return { ParquetFile, arrow, memory: wasmMemory };
}
