/**
 * `actions` at validation: every kind accepted, and every CEL syntax or type error
 * refused where the job is validated (`parseJobYaml`, used by `sluice job validate` and
 * the API), at the line and column of the offending token inside the expression.
 */
import { describe, expect, it } from 'vitest';
import { parseJobYaml } from '../../shared/job/parse.ts';
import { validateJob } from '../../shared/job/validate.ts';

const head = `name: t
input:
  gcs:
    bucket-name: b-1
    credentials: { storage-url: gs://b-1 }
    object-names: [x/]
`;
const job = (actions: string) => `${head}actions:\n${actions}output:\n  discard: {}\n`;

function errorsOf(yaml: string, level: 'saved' | 'rendered' = 'saved') {
  const result = parseJobYaml(yaml, { level });
  return result.ok ? [] : result.errors.map((e) => `${e.line}:${e.column} ${e.path}: ${e.message}`);
}

describe('actions: validation', () => {
  it('accepts every kind', () => {
    const result = parseJobYaml(
      job(`  - filter: event.status >= 500 && has(event.path) && job != worker
  - set: { http.code: int(event.status), source: 'job + "@" + worker', tags: '["a", "b"]' }
  - remove: [debug, http.headers]
  - rename: { msg: message, req.id: request_id }
  - keep: [ts, message, http]
  - parse-json: payload
  - parse-timestamp: { field: time, format: "%d/%b/%Y:%H:%M:%S %z" }
  - parse-timestamp: { field: ts, format: rfc3339 }
  - filter: event.path.matches("^/v1/")
`),
      { level: 'rendered' },
    );
    expect(result.ok ? [] : result.errors).toEqual([]);
    expect(result.ok && result.job.actions?.length).toBe(9);
  });

  it('refuses a CEL type error at the line and column of the token', () => {
    expect(errorsOf(job('  - filter: event.status >= 500 && job + 1 == 2\n'))).toEqual([
      '8:36 actions.0.filter: CEL type error: no such overload: string + int (character 24 of the expression)',
    ]);
  });

  it('refuses a CEL syntax error inside a quoted set expression, on the field with dots in its name', () => {
    expect(errorsOf(job('  - set:\n      http.code: "int(event.status) +"\n'))).toEqual([
      '9:38 actions.0.set.http.code: CEL syntax error: Unexpected token: EOF (character 20 of the expression)',
    ]);
  });

  it('points into a block scalar', () => {
    expect(errorsOf(job('  - filter: |\n      event.a == 1 &&\n        worker * 2\n'))).toEqual([
      '10:9 actions.0.filter: CEL type error: no such overload: string * int (character 19 of the expression)',
    ]);
  });

  it('refuses a filter that is not a bool expression', () => {
    expect(errorsOf(job('  - filter: size(job)\n'))).toEqual([
      '8:13 actions.0.filter: a filter must be true or false (a bool expression); this one is int (character 1 of the expression)',
    ]);
  });

  it('refuses list macros nested more than two deep (their cost multiplies per level), not chained ones', () => {
    const deep = '[0,1].exists(a, [0,1].exists(b, [0,1].exists(c, a + b + c > 5)))';
    expect(errorsOf(job(`  - filter: "${deep}"\n`))).toEqual([
      '8:46 actions.0.filter: exists() inside 2 other list macros: at most 2 of map, filter, all, exists and exists_one may nest (each level runs the next once per element) (character 33 of the expression)',
    ]);
    const eight = `${'[0,1,2,3,4,5,6,7,8,9].map(v, '.repeat(8)}string(v)${')'.repeat(8)}`;
    expect(errorsOf(job(`  - set: { x: "${eight}" }\n`))).toHaveLength(1);
    const fine = [
      '[1,2].map(a, [3,4].filter(b, b > a))',
      '[1,2].map(a, a * 2).filter(b, b > 2).map(c, [c].exists(d, d > 0)).map(e, e)',
    ];
    for (const expression of fine) expect(errorsOf(job(`  - set: { x: "${expression}" }\n`))).toEqual([]);
  });

  it('refuses $\u007bsecret|...} in an expression, and a matches pattern that is not a literal or not RE2', () => {
    const errors = errorsOf(
      job(`  - filter: event.key == "\${secret|api/key}"
  - filter: event.path.matches(event.pattern)
  - filter: event.path.matches("(a)\\\\1")
`),
    );
    expect(errors).toEqual([
      expect.stringMatching(/^8:27 actions\.0\.filter: \$\{secret\|\.\.\.\} is not allowed in an expression/),
      expect.stringMatching(/^9:13 actions\.1\.filter: matches takes its pattern as a string literal/),
      expect.stringMatching(/^10:32 actions\.2\.filter: backreferences/),
    ]);
  });

  it('refuses bad field paths, unknown kinds and two kinds in one action', () => {
    expect(
      errorsOf(
        job(`  - remove: [__proto__.x, "a..b"]
  - rename: { constructor: x }
  - sett: { a: "1" }
  - { filter: "true", remove: [a] }
  - parse-timestamp: { field: t, format: "%H:%M" }
`),
      ),
    ).toEqual([
      '8:14 actions.0.remove.0: `__proto__` is reserved (it is a property of every JavaScript object)',
      expect.stringMatching(/^8:27 actions\.0\.remove\.1: must be a field name/),
      expect.stringMatching(
        /^9:15 actions\.1\.rename\.constructor: key `constructor` `constructor` is reserved/,
      ),
      '10:5 actions.2.sett: unknown field `sett` at action; did you mean `set`?',
      '10:5 actions.2: an action needs exactly one of: filter, set, remove, rename, keep, parse-json, parse-timestamp',
      '11:5 actions.3: an action takes exactly one of filter, set, remove, rename, keep, parse-json, parse-timestamp; found filter and remove',
      '12:42 actions.4.parse-timestamp.format: the format needs a year (%Y or %y) or epoch seconds (%s)',
    ]);
  });

  it('checks an expression with a {{key}} reference once the job is rendered', () => {
    const saved = job('  - filter: event.status >= {{min}}\n');
    expect(errorsOf(saved, 'saved')).toEqual([]);
    const rendered = validateJob(
      {
        ...(parseJobYaml(saved) as { raw: Record<string, unknown> }).raw,
        actions: [{ filter: 'event.status >= ' }],
      },
      { level: 'rendered' },
    );
    expect(rendered.ok ? [] : rendered.errors).toEqual([
      {
        path: 'actions.0.filter',
        message: 'CEL syntax error: Unexpected token: EOF (character 17 of the expression)',
      },
    ]);
  });
});
