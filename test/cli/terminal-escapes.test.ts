/**
 * Text other people wrote reaches an operator's terminal shown, never obeyed: control
 * characters and bidirectional overrides are escaped (`\x1b`, `\u202e`) in `job get -o yaml`,
 * error and hint lines, `job validate` and `job apply` messages, tables, and JSON and YAML
 * output (there by their own escapes, so the value parses back unchanged).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;
const dir = mkdtempSync(join(tmpdir(), 'sluice-escapes-'));
/** Characters a terminal obeys: C0 and C1 controls but tab and line feed, and bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

beforeAll(async () => {
  served = await servedCli();
});
afterAll(() => served.close());

const cli = (...args: string[]) => served.run(args);

describe('escape sequences other people saved', () => {
  it('`job get -o yaml` shows a saved escape sequence as text, and says so on stderr', async () => {
    const file = join(dir, 'evil2.yaml');
    writeFileSync(
      file,
      'name: evil2\n# \u001b]0;PWNED\u0007\u001b[2J comment \u202eevil\ninput:\n  http-poll:\n    url: "http://127.0.0.1:8470/s.json"\noutput:\n  print: {}\n',
    );
    expect((await cli('job', 'apply', file)).code).toBe(0);
    const r = await cli('job', 'get', 'evil2', '-o', 'yaml');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(OBEYED);
    expect(r.stdout).toContain('# \\x1b]0;PWNED\\x07\\x1b[2J comment \\u202eevil\n');
    // Still YAML: the same job.
    expect(parse(r.stdout)).toMatchObject({ name: 'evil2', output: { print: {} } });
    expect(r.stderr).toMatch(/note: .*escaped/);
  });

  it('an error message quoting the server shows the escape sequence as text', async () => {
    const r = await cli('worker', 'get', 'w\u001b[31mX');
    expect(r.code).toBe(4);
    expect(r.stderr).not.toMatch(OBEYED);
    expect(r.stderr).toContain('w\\x1b[31mX');
  });

  it('`job validate` and `job apply` show an unknown field named with an escape sequence as text', async () => {
    const file = join(dir, 'evil-key.yaml');
    writeFileSync(
      file,
      'name: evilkey\n"\\e]0;PWNED\\a\\u202e": 1\ninput:\n  http-poll:\n    url: http://127.0.0.1:1/\noutput:\n  print: {}\n',
    );
    for (const command of ['validate', 'apply']) {
      const r = await cli('job', command, file);
      expect(r.code, command).toBe(1);
      expect(r.stderr, command).not.toMatch(OBEYED);
      expect(r.stderr, command).toContain('\\x1b]0;PWNED\\x07\\u202e');
    }
  });
});

describe('bidirectional overrides in names', () => {
  const name = 'ci-\u202egnp.exe';

  beforeAll(async () => {
    expect((await cli('api-key', 'create', name, '--role', 'viewer')).code).toBe(0);
  });

  it('a table shows them as \\uNNNN text', async () => {
    const r = await cli('api-key', 'ls');
    expect(r.stdout).not.toMatch(OBEYED);
    expect(r.stdout).toContain('ci-\\u202egnp.exe');
  });

  it('JSON and YAML escape them by their own rules: the value parses back unchanged', async () => {
    const json = await cli('api-key', 'ls', '-o', 'json');
    expect(json.stdout).not.toMatch(OBEYED);
    expect(json.stdout).toContain('ci-\\u202egnp.exe');
    expect(JSON.parse(json.stdout).map((k: { name: string }) => k.name)).toContain(name);
    const yaml = await cli('api-key', 'ls', '-o', 'yaml');
    expect(yaml.stdout).not.toMatch(OBEYED);
    expect(parse(yaml.stdout).map((k: { name: string }) => k.name)).toContain(name);
  });
});
