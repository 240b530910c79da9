/**
 * Where `sluice job validate` places errors inside `actions`: an error in a folded CEL
 * expression (`>-`) at the line and column of the offending token, not at the `>-`
 * header; an error about a key of a `set` or `rename` map, or about the value of a key
 * with dots in its name, at that key or value, not at `set`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateErrorLines } from '../../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-action-positions-'));

/** A job whose `actions:` is line 7, so its first action is on line 8. */
function jobWithActions(name: string, actions: string[]): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      'name: j',
      'input:',
      '  gcs:',
      '    bucket-name: b-1',
      '    credentials: { storage-url: gs://b-1 }',
      '    object-names: [x/]',
      'actions:',
      ...actions,
      'output:',
      '  discard: {}',
      '',
    ].join('\n'),
  );
  return file;
}

describe('positions of errors in actions', () => {
  it('points at the token of a folded filter expression, on the line after `>-`', async () => {
    const file = jobWithActions('folded-filter.yaml', [
      '  - filter: >-',
      '      event.a == 1 &&',
      '      worker * 2',
    ]);
    expect(await validateErrorLines(file)).toEqual({
      code: 1,
      lines: [
        `${file}:10:7: actions.0.filter: CEL type error: no such overload: string * int (character 17 of the expression)`,
      ],
    });
  });

  it('points at the end of a folded set expression that ends too soon', async () => {
    const file = jobWithActions('folded-set.yaml', [
      '  - set:',
      '      y: >-',
      '        event.status +',
      '        1 +',
      '        size(',
    ]);
    expect(await validateErrorLines(file)).toEqual({
      code: 1,
      lines: [
        `${file}:12:14: actions.0.set.y: CEL syntax error: Unexpected token: EOF (character 25 of the expression)`,
      ],
    });
  });

  it('points into a folded expression whose lines are joined by a blank line or indented more', async () => {
    const file = jobWithActions('folded-kept-lines.yaml', [
      '  - filter: >',
      '      event.a == 1 &&',
      '',
      '        event.b == 2 &&',
      '      worker * 2',
    ]);
    expect((await validateErrorLines(file)).lines).toEqual([
      `${file}:12:7: actions.0.filter: CEL type error: no such overload: string * int (character 36 of the expression)`,
    ]);
  });

  it('points at the token of a plain expression folded over two lines', async () => {
    const file = jobWithActions('plain-two-lines.yaml', ['  - filter: event.a == 1 &&', '      worker * 2']);
    expect((await validateErrorLines(file)).lines).toEqual([
      `${file}:9:7: actions.0.filter: CEL type error: no such overload: string * int (character 17 of the expression)`,
    ]);
  });

  it('points at a bad key of a set map, not at `set`', async () => {
    const file = jobWithActions('set-key.yaml', ['  - set:', '      ok: event.x', '      bad..key: event.y']);
    expect(await validateErrorLines(file)).toEqual({
      code: 1,
      lines: [
        `${file}:10:7: actions.0.set.bad..key: key \`bad..key\` must be a field name or a dotted path of them (letters, digits, _ @ $ -), e.g. http.status`,
      ],
    });
  });

  it('points at a reserved name in a dotted rename key, and at the value of a dotted key (an empty expression once)', async () => {
    const file = jobWithActions('dotted-keys.yaml', [
      '  - rename:',
      '      a.constructor: b',
      '      req.id: "x..y"',
      '  - set:',
      '      http.code: ""',
    ]);
    expect((await validateErrorLines(file)).lines).toEqual([
      `${file}:10:15: actions.0.rename.req.id: must be a field name or a dotted path of them (letters, digits, _ @ $ -), e.g. http.status`,
      `${file}:9:7: actions.0.rename.a.constructor: key \`a.constructor\` \`constructor\` is reserved (it is a property of every JavaScript object)`,
      `${file}:12:18: actions.1.set.http.code: an expression must not be empty`,
    ]);
  });
});
