// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secrets|..} is literal job and context text here
/**
 * `sluice job run FILE` when the job does not render: each error is printed as
 * `sluice job validate` prints one, `FILE:LINE:COLUMN: path: message`, at the field of FILE it
 * is about. An error a context value brought in (a value passed with --context, a `context:`
 * entry holding a bad reference) points at the field that references the key; a missing key
 * keeps its hint. Run through the real executable, `bin/sluice.js`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-run-positions-'));

function jobFile(name: string, text: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** `node bin/sluice.js job run FILE --context ...`: exit code and standard error. */
function jobRun(file: string, ...context: string[]): Promise<{ code: number | null; stderr: string }> {
  const args = [join(root, 'bin/sluice.js'), 'job', 'run', file, '--state-dir', join(dir, 'state')];
  if (context.length) args.push('--context', ...context);
  const child = spawn(process.execPath, args, { cwd: root, env: process.env });
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

/** The lines of standard error that start with the file's name. */
const placed = (stderr: string, file: string) =>
  stderr.split('\n').filter((line) => line.startsWith(`${file}:`));

describe.concurrent('sluice job run: render errors at FILE:LINE:COLUMN', { timeout: 60_000 }, () => {
  it('places each missing context key at the field that references it, with the --context hint', async () => {
    const file = jobFile(
      'missing',
      'name: t\ninput:\n  http-poll:\n    url: "{{url}}"\n    timeout: "{{timeout}}"\noutput:\n  print: {}\n',
    );
    const r = await jobRun(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${file} does not render\n`);
    expect(placed(r.stderr, file)).toEqual([
      `${file}:4:10: input.http-poll.url: missing context key \`url\` (pass it with --context url=VALUE)`,
      `${file}:5:14: input.http-poll.timeout: missing context key \`timeout\` (pass it with --context timeout=VALUE)`,
    ]);
  });

  it('places a value passed with --context that makes the job invalid at the field using it, without the hint', async () => {
    const file = jobFile(
      'invalid-value',
      'name: t\ninput:\n  http-poll:\n    url: "{{url}}"\n    timeout: 5s\noutput:\n  print: {}\n',
    );
    const r = await jobRun(file, 'url=not-a-url');
    expect(r.code).toBe(1);
    expect(placed(r.stderr, file)).toEqual([
      `${file}:4:10: input.http-poll.url: must be an http:// or https:// URL`,
    ]);
    expect(r.stderr).not.toContain('--context url=VALUE');
  });

  it('places a reference to a sub-key that does not resolve', async () => {
    const file = jobFile(
      'unresolved',
      'name: t\ninput:\n  http-poll:\n    # where to poll\n    url: https://{{api.host}}/status\noutput:\n  print: {}\n',
    );
    const r = await jobRun(file, 'api={"port":443}');
    expect(r.code).toBe(1);
    expect(placed(r.stderr, file)).toEqual([
      `${file}:5:10: input.http-poll.url: context key \`api.host\` does not resolve`,
    ]);
  });

  it('places a malformed ${...} that a --context value brought in at the field that references the key', async () => {
    const file = jobFile(
      'bad-ref-option',
      "name: t\ninput:\n  http-poll:\n    url: 'https://example.com/status'\n    headers:\n      authorization: '{{token}}'\noutput:\n  print: {}\n",
    );
    const r = await jobRun(file, 'token=Bearer ${secrets|api/token}');
    expect(r.code).toBe(1);
    const lines = placed(r.stderr, file);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^${escapeRegExp(file)}:6:22: input\\.http-poll\\.headers\\.authorization: .*is not a runtime reference`,
      ),
    );
  });

  it("places a malformed ${...} of the file's own context block at the field that references it", async () => {
    const file = jobFile(
      'bad-ref-block',
      "name: t\ncontext:\n  token: 'Bearer ${secrets|api/token}'\ninput:\n  http-poll:\n    url: 'https://example.com/status'\n    headers:\n      authorization: '{{token}}'\noutput:\n  print: {}\n",
    );
    const r = await jobRun(file);
    expect(r.code).toBe(1);
    const lines = placed(r.stderr, file);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^${escapeRegExp(file)}:8:22: input\\.http-poll\\.headers\\.authorization: .*is not a runtime reference`,
      ),
    );
  });

  it('places a CEL error of a rendered expression at its field: the offset counts in the rendered text, not the file', async () => {
    const file = jobFile(
      'cel',
      "name: t\ninput:\n  http-poll:\n    url: 'https://example.com/status'\nactions:\n  - filter: 'event.n > {{min}} + )'\noutput:\n  print: {}\n",
    );
    const r = await jobRun(file, 'min=5');
    expect(r.code).toBe(1);
    const lines = placed(r.stderr, file);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^${escapeRegExp(file)}:6:13: actions\\.0\\.filter: CEL syntax error: .*\\(character 15 of the expression\\)$`,
      ),
    );
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
