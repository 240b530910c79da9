import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const FORBIDDEN = [
  /^@google-cloud\//,
  /^firebase/,
  /^node:(fs|child_process|net|http|https|dgram|cluster)(\/|$)/,
  /(^|\/)(functions|local|cli)\//,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('shared/ is the pure core', () => {
  it('imports no cloud SDK, no I/O module and nothing from functions/, local/ or cli/', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles('shared')) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)['"]([^'"]+)['"]/g)) {
        if (FORBIDDEN.some((re) => re.test(match[1]!))) offenders.push(`${file}: ${match[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
