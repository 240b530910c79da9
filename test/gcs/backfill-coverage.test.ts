/**
 * Which filter changes a notified input's first listing (backfill) still covers: a run
 * whose filters read an object that listing did not lists again (`covers` false); a
 * narrower one does not.
 */
import { describe, expect, it } from 'vitest';
import { planGcsInput } from '../../functions/runner/inputs/gcs/config.ts';
import { backfillCoverage, covers } from '../../functions/runner/inputs/gcs/notifications.ts';
import { gcsJob } from './helpers.ts';

const coverage = (fields: Record<string, unknown>) =>
  backfillCoverage(
    planGcsInput(
      gcsJob('b-1', { fingerprinting: true, notifications: { subscription: 'uploads' }, ...fields }),
    ),
  );
const listed = (fields: Record<string, unknown>) => JSON.stringify(coverage(fields));

describe('backfill coverage', () => {
  it('covers the same or narrower filters, not wider ones', () => {
    const base = { 'object-names': ['in/'], 'include-regex': ['\\.json$'], 'exclude-regex': ['tmp'] };
    const cases: [Record<string, unknown>, boolean][] = [
      [base, true],
      [{ ...base, 'object-names': ['in/2026/'] }, true],
      [{ ...base, 'object-names': ['in/', 'in2/'] }, false],
      [{ ...base, 'object-names': [] }, false],
      [{ ...base, 'include-regex': ['\\.json$', '\\.csv$'] }, false],
      [{ ...base, 'include-regex': undefined }, false],
      [{ ...base, 'exclude-regex': ['tmp', 'bak'] }, true],
      [{ ...base, 'exclude-regex': undefined }, false],
      [{ ...base, 'timestamp-mode': 'last-modified', 'maximum-age': { value: '1d' } }, true],
    ];
    for (const [now, expected] of cases)
      expect(covers(listed(base), coverage(now)), JSON.stringify(now)).toBe(expected);
    expect(covers(listed({ 'object-names': [] }), coverage({ 'object-names': ['any/'] }))).toBe(true);
    const aged = { 'object-names': [], 'timestamp-mode': 'last-modified', 'maximum-age': { value: '1d' } };
    expect(covers(listed(aged), coverage({ ...aged, 'maximum-age': { value: '1h' } }))).toBe(true);
    expect(covers(listed(aged), coverage({ ...aged, 'maximum-age': { value: '7d' } }))).toBe(false);
    expect(covers(listed(aged), coverage({ 'object-names': [] }))).toBe(false);
    expect(covers('not json', coverage(base))).toBe(false);
  });
});
