/**
 * Unknown keys as `sluice job validate` shows them: each unknown key of a map is its own
 * error, at its own path and at the line and column of that key, with its own "did you
 * mean" or list of the known fields; a map that takes no fields says so.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unknown-keys-'));

function jobFile(name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const GCS_HEAD = [
  'name: j',
  'input:',
  '  gcs:',
  '    bucket-name: b-1',
  '    credentials: { storage-url: gs://b-1 }',
  '    object-names: [x/]',
];

describe('unknown keys in a job file', () => {
  it('reports two unknown keys of one map each at its own key, with its own suggestion', async () => {
    const file = jobFile('two-unknown.yaml', [
      ...GCS_HEAD,
      '    modee: list-objects',
      '    orderd: true',
      'output:',
      '  print: {}',
    ]);
    const r = await runCli(['job', 'validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((line) => line.startsWith(file))).toEqual([
      `${file}:7:5: input.gcs.modee: unknown field \`modee\` at input.gcs; did you mean \`mode\`?`,
      `${file}:8:5: input.gcs.orderd: unknown field \`orderd\` at input.gcs; did you mean \`ordered\`?`,
    ]);
  });

  it('lists the known fields for each unknown key that resembles none, and suggests for one that does', async () => {
    const file = jobFile('three-unknown.yaml', [
      'name: j',
      'input:',
      '  http-poll:',
      '    url: https://example.com/',
      '    zzzzzz: 1',
      '    methd: GET',
      '    qqqqqq: 2',
      'output:',
      '  print: {}',
    ]);
    const r = await runCli(['job', 'validate', '-o', 'json', file]);
    expect(r.code).toBe(1);
    const known = 'url, method, headers, body, json, timeout, max-response-size, trigger';
    expect(JSON.parse(r.stdout)[0].details).toEqual([
      {
        path: 'input.http-poll.zzzzzz',
        message: `unknown field \`zzzzzz\` at input.http-poll; known fields: ${known}`,
        line: 5,
        column: 5,
      },
      {
        path: 'input.http-poll.methd',
        message: 'unknown field `methd` at input.http-poll; did you mean `method`?',
        line: 6,
        column: 5,
      },
      {
        path: 'input.http-poll.qqqqqq',
        message: `unknown field \`qqqqqq\` at input.http-poll; known fields: ${known}`,
        line: 7,
        column: 5,
      },
    ]);
  });

  it('reports two unknown keys of an action each at its key', async () => {
    const file = jobFile('action-unknown.yaml', [
      ...GCS_HEAD,
      'actions:',
      '  - parse-timestamp: { field: t, format: rfc3339, feild: x, formt: y }',
      'output:',
      '  print: {}',
    ]);
    const r = await runCli(['job', 'validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file}:8:51: actions.0.parse-timestamp.feild: unknown field \`feild\` at parse-timestamp; did you mean \`field\`?`,
    );
    expect(r.stderr).toContain(
      `${file}:8:61: actions.0.parse-timestamp.formt: unknown field \`formt\` at parse-timestamp; did you mean \`format\`?`,
    );
  });

  it('says that print takes no fields instead of listing none', async () => {
    const file = jobFile('print-field.yaml', [...GCS_HEAD, 'output:', '  print: { foo: 1 }']);
    const r = await runCli(['job', 'validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file}:8:12: output.print.foo: unknown field \`foo\` at output.print, which takes no fields`,
    );
    expect(r.stderr).not.toContain('known fields');
  });
});
