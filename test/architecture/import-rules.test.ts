/**
 * The layering of ARCHITECTURE.md, checked on every import: the server side never reaches
 * into the local stack or the CLI, a route family uses another family's domain and stores
 * but never its routes file, and the CLI's commands never import the program that
 * registers them (a cycle).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !f.includes('/assembly/'));
}

/** Each relative import of a file, as a path from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) =>
    normalize(join(dirname(file), m[1]!)),
  );
}

/** `functions/jobs/routes.ts` → `jobs`; undefined outside a family folder. */
function familyOf(path: string): string | undefined {
  return /^functions\/([^/]+)\//.exec(path)?.[1];
}

function importRuleViolations(files: string[], imports: (file: string) => string[]): string[] {
  const violations: string[] = [];
  for (const file of files) {
    for (const target of imports(file)) {
      const edge = `${file} imports ${relative('.', target)}`;
      if (file.startsWith('functions/')) {
        if (target.startsWith('local/') || target.startsWith('cli/'))
          violations.push(`${edge}: functions/ is deployed; local/ and cli/ are not`);
        const isRoutes = target.endsWith('/routes.ts') && target.startsWith('functions/');
        // The entry points and the family list assemble routes files: that is their job.
        const assembles = file.startsWith('functions/entry/') || file === 'functions/families.ts';
        if (isRoutes && familyOf(target) !== familyOf(file) && !assembles)
          violations.push(
            `${edge}: another family's routes file (move what it needs into a domain or store module)`,
          );
      }
      if (file.startsWith('cli/commands/') && target === 'cli/main.ts')
        violations.push(`${edge}: a command group must not import the program that registers it`);
    }
  }
  return violations;
}

describe('import rules', () => {
  it('functions/ imports neither local/, cli/ nor another family’s routes.ts; cli/commands/ do not import cli/main.ts', () => {
    const files = [...sourceFiles('functions'), ...sourceFiles('cli')];
    expect(importRuleViolations(files, importsOf)).toEqual([]);
  });

  it('catches each kind of violation', () => {
    const graph: Record<string, string[]> = {
      'functions/scheduled/x.ts': ['local/tasks.ts', 'cli/output.ts'],
      'functions/jobs/routes.ts': ['functions/workers/routes.ts', 'functions/jobs/store.ts'],
      'functions/entry/workers.ts': ['functions/workers/routes.ts'],
      'cli/commands/job.ts': ['cli/main.ts'],
    };
    expect(importRuleViolations(Object.keys(graph), (f) => graph[f]!)).toEqual([
      expect.stringContaining('functions/scheduled/x.ts imports local/tasks.ts'),
      expect.stringContaining('functions/scheduled/x.ts imports cli/output.ts'),
      expect.stringContaining(
        "functions/jobs/routes.ts imports functions/workers/routes.ts: another family's",
      ),
      expect.stringContaining('cli/commands/job.ts imports cli/main.ts'),
    ]);
  });
});
