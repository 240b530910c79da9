/**
 * The table every function entry point is generated from (by `scripts/build.ts`) and
 * checked against (by `scripts/check-deploy.ts`). API families come from the import
 * lines of `functions/families.ts`, so adding a family there is all it takes to get
 * its own function: each generated entry statically imports only that family's module.
 *
 * @example
 *   const entries = await entryTable();  // [{ name: 'tokens', kind: 'http', module: '../tokens/routes.ts', ... }]
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface HttpEntry {
  kind: 'http';
  /** The function's name (and the family's directory): `/api/<name>/...` mostly routes here. */
  name: string;
  /** The family module, relative to `functions/entry/`. */
  module: string;
  /** The factory it exports. */
  exportName: string;
}

/** Serves `/api/openapi.json` for the whole API: a document `npm run build` writes next to the bundle. */
export interface DocsEntry {
  kind: 'docs';
  name: string;
}

/** Runs the periodic tasks of `functions/scheduled/tasks.ts` when Cloud Scheduler calls it. */
export interface TasksEntry {
  kind: 'tasks';
  name: string;
}

/** Relays each new event to the message triggers that match it, when Eventarc calls it. */
export interface RelayEntry {
  kind: 'relay';
  name: string;
}

/** Runs the `cloud` worker's run requests that Pub/Sub pushes to it (functions/runs/). */
export interface RunsEntry {
  kind: 'runs';
  name: string;
}

export type Entry = HttpEntry | DocsEntry | TasksEntry | RelayEntry | RunsEntry;

export const FAMILIES_FILE = fileURLToPath(new URL('../families.ts', import.meta.url));

const FAMILY_IMPORT = /^import\s*\{\s*(\w+)\s*\}\s*from\s*'\.\/([\w-]+)\/([\w./-]+\.ts)';/gm;

/** Reads the family imports of `functions/families.ts` (type-only imports are not families). */
export function httpEntriesFrom(familiesSource: string): HttpEntry[] {
  return [...familiesSource.matchAll(FAMILY_IMPORT)].map(([, exportName, dir, file]) => ({
    kind: 'http' as const,
    name: dir!,
    module: `../${dir}/${file}`,
    exportName: exportName!,
  }));
}

export const OTHER_ENTRIES: Entry[] = [
  { kind: 'docs', name: 'openapi' },
  { kind: 'tasks', name: 'scheduled' },
  { kind: 'relay', name: 'event-relay' },
  { kind: 'runs', name: 'runner' },
];

export async function entryTable(familiesFile = FAMILIES_FILE): Promise<Entry[]> {
  return [...httpEntriesFrom(await readFile(familiesFile, 'utf8')), ...OTHER_ENTRIES];
}

const HEADER = '// Generated from functions/entry/table.ts by `npm run build`; do not edit.\n';

/** The source of one entry module: it imports its own family and nothing else of the API. */
export function entrySource(entry: Entry): string {
  switch (entry.kind) {
    case 'http':
      return (
        HEADER +
        `import { ${entry.exportName} } from '${entry.module}';\n` +
        "import { httpFunction } from './http-function.ts';\n\n" +
        `export const handler = httpFunction([${entry.exportName}]);\n`
      );
    case 'docs':
      return (
        HEADER +
        "import { documentFunction } from './document-function.ts';\n\n" +
        `export const handler = documentFunction(import.meta.url, '${entry.name}.json', '/api/${entry.name}.json');\n`
      );
    case 'tasks':
      return (
        HEADER +
        "import { PERIODIC_TASKS } from '../scheduled/tasks.ts';\n" +
        "import { tasksFunction } from './tasks-function.ts';\n\n" +
        'export const handler = tasksFunction(PERIODIC_TASKS);\n'
      );
    case 'relay':
      return (
        HEADER +
        "import { relayFunction } from './relay-function.ts';\n\n" +
        'export const handler = relayFunction();\n'
      );
    case 'runs':
      return (
        HEADER +
        "import { runnerFunction } from './runner-function.ts';\n\n" +
        'export const handler = runnerFunction();\n'
      );
  }
}
