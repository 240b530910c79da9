/**
 * The read worker's code comes in parts. A thread starts with the core (decompression,
 * line splitting and checking: about 35 KB) and is sent a part with the first task that
 * needs it. Before, every thread parsed all of it (about 0.9 MB) at start, for NDJSON too:
 * about 50 ms of a core per thread, and `sluice job run` over 40 gzip NDJSON objects took
 * 1.68 s instead of 1.88 s (medians of 10 alternating runs) once the parts were left out.
 *
 * In the thread's bundle (scripts/build-workers.ts), each part's module is replaced by a
 * stand-in that looks the part up in PARTS_GLOBAL, where the part's own script puts it.
 * Everywhere else (the main thread, tests) the modules are imported as usual.
 *
 * @example
 *   worker.post({ t: 'start', id, task, parts: partsNeeded(task).map((name) => READ_WORKER_PARTS[name]) });
 */
import type { ReadTask } from './read-task.ts';

export type ReadPartName = 'parquet' | 'actions';

/** Each part's module and the object it exports. */
export const READ_PARTS: Record<ReadPartName, { module: string; export: string }> = {
  parquet: { module: 'functions/runner/cores/read-part-parquet.ts', export: 'parquetPart' },
  actions: { module: 'functions/runner/cores/read-part-actions.ts', export: 'actionsPart' },
};

/** Where a thread keeps the parts it has loaded. */
export const PARTS_GLOBAL = '__sluiceReadParts';

/** The parts a task's thread needs besides the core. */
export function partsNeeded(task: Pick<ReadTask, 'parquet' | 'actions'>): ReadPartName[] {
  const parts: ReadPartName[] = [];
  if (task.parquet) parts.push('parquet');
  if (task.actions) parts.push('actions');
  return parts;
}

/** The stand-in for a part's module in the thread's core script. */
export function partStandIn(name: ReadPartName): string {
  const { export: exported } = READ_PARTS[name];
  return `export const ${exported} = new Proxy({}, {
  get(_, key) {
    const part = globalThis.${PARTS_GLOBAL}?.${name};
    if (!part) throw new Error('this read thread has not loaded its ${name} code');
    return part[key];
  },
});\n`;
}

/** The entry of a part's own script: it puts the part where the stand-in looks. */
export function partEntry(name: ReadPartName): string {
  const { module, export: exported } = READ_PARTS[name];
  return `import { ${exported} } from './${module}';\n(globalThis.${PARTS_GLOBAL} ??= {}).${name} = ${exported};\n`;
}
