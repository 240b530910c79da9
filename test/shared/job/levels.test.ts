/**
 * The saved level differs from the rendered one only where a `{{...}}` reference stands in
 * for a value (fields.ts). `sluice job run` relies on it: a file without a reference is
 * checked at the rendered level at once (cli/commands/job-run.ts). Here every field of the
 * realistic job, made wrong in each way a user could, is judged alike at both levels.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { containsReference, validateJob } from '../../../shared/job/index.ts';

/** The realistic job with its references filled in, as rendering would. */
const PLAIN = JSON.parse(
  JSON.stringify(parse(readFileSync('test/fixtures/jobs/gcs-full.yaml', 'utf8')))
    .replaceAll('{{bucket}}', 'acme-logs-prod')
    .replaceAll('{{worker}}', 'w1')
    .replaceAll('{{lookback}}', '10m'),
) as Record<string, unknown>;

type Path = (string | number)[];

/** Every member of the job: its path and value. */
function members(value: unknown, path: Path = [], out: [Path, unknown][] = []): [Path, unknown][] {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) members(v, [...path, i], out);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      out.push([[...path, key], v]);
      members(v, [...path, key], out);
    }
  }
  return out;
}

/** The job with the member at `path` replaced by `value` (removed when `value` is REMOVE). */
const REMOVE = Symbol('remove');
function changed(path: Path, value: unknown): unknown {
  const copy = structuredClone(PLAIN);
  let at: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === REMOVE) delete at[last];
  else at[last] = value;
  return copy;
}

/** Values of the wrong kind for what is there now, and text that no field takes as it is. */
function wrongFor(value: unknown): unknown[] {
  const wrong: unknown[] = ['5 parsecs', -1, 1.5, true, [], { unexpected: 1 }, null, REMOVE];
  return wrong.filter((w) => typeof w !== typeof value || Array.isArray(w) !== Array.isArray(value));
}

describe('the saved and the rendered level', () => {
  it('judge a job without references alike, whatever field is wrong and however', () => {
    expect(containsReference(PLAIN)).toBe(false);
    let variants = 0;
    let refused = 0;
    for (const [path, value] of members(PLAIN)) {
      for (const wrong of wrongFor(value)) {
        const job = changed(path, wrong);
        const saved = validateJob(job, { level: 'saved' });
        const rendered = validateJob(job, { level: 'rendered' });
        const where = `${path.join('.')} = ${String(wrong === REMOVE ? '(removed)' : JSON.stringify(wrong))}`;
        expect(rendered.ok, where).toBe(saved.ok);
        if (!saved.ok && !rendered.ok) {
          expect(rendered.errors, where).toEqual(saved.errors);
          refused++;
        }
        variants++;
      }
    }
    // Most of these are refused: the comparison is about errors, not only about passing.
    expect(variants).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(variants / 2);
  });

  it('report a wrong field of a map given for a choice of words at that field', () => {
    const job = changed(['input', 'gcs', 'timestamp-mode'], { 'object-name-pattern': 5 });
    for (const level of ['saved', 'rendered'] as const)
      expect(validateJob(job, { level })).toEqual({
        ok: false,
        errors: [
          {
            path: 'input.gcs.timestamp-mode.object-name-pattern',
            message: 'expected a string, got a number (5)',
          },
        ],
      });
  });

  it('differ where a reference stands for a value (so a job with one is read at the saved level)', () => {
    const job = changed(['input', 'gcs', 'retry', 'retries'], '{{attempts}}');
    expect(containsReference(job)).toBe(true);
    expect(validateJob(job, { level: 'saved' }).ok).toBe(true);
    expect(validateJob(job, { level: 'rendered' }).ok).toBe(false);
  });
});

describe('containsReference', () => {
  it('finds a reference in any value or key, and not an escaped one', () => {
    expect(containsReference({ a: [1, { b: 'x' }] })).toBe(false);
    expect(containsReference({ a: [1, { b: 'gs://{{bucket}}/x' }] })).toBe(true);
    expect(containsReference({ '{{key}}': 1 })).toBe(true);
    expect(containsReference({ a: '\\{{not-a-reference}}' })).toBe(false);
    expect(containsReference({ a: '{ {x}}' })).toBe(false);
  });

  it('walks a deeply nested or very long document without running out of stack', () => {
    let deep: unknown = '{{bottom}}';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(containsReference({ a: deep })).toBe(true);
    // A 1 MiB job file holds a list of half a million short items.
    expect(containsReference({ a: new Array(500_000).fill(1) })).toBe(false);
  });
});
