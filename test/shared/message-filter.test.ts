import { describe, expect, it } from 'vitest';
import { matchesMessageFilter } from '../../shared/events/filter.ts';

const user = {
  type: 'user-generated' as const,
  kind: 'user' as const,
  source: 'server' as const,
  tags: ['nightly'],
  job: 'j1',
};
const alert = { ...user, type: 'user-alert' as const };
const system = {
  type: 'job-finished' as const,
  kind: 'system' as const,
  source: 'worker' as const,
  worker: 'w1',
  job: 'j2',
};

describe('message trigger filters', () => {
  it('matches everything without filters', () => {
    expect(matchesMessageFilter({}, system)).toBe(true);
  });

  it('matches on kind, source, worker, job and type, all of them together', () => {
    expect(matchesMessageFilter({ 'filter-kind': 'user' }, user)).toBe(true);
    expect(matchesMessageFilter({ 'filter-kind': 'user' }, system)).toBe(false);
    expect(matchesMessageFilter({ 'filter-source': ['worker', 'job'] }, system)).toBe(true);
    expect(matchesMessageFilter({ 'filter-source': ['job'] }, system)).toBe(false);
    expect(matchesMessageFilter({ 'filter-worker': 'w1', 'filter-job': 'j2' }, system)).toBe(true);
    expect(matchesMessageFilter({ 'filter-worker': 'w1', 'filter-job': 'j1' }, system)).toBe(false);
    expect(matchesMessageFilter({ 'filter-type': ['job-finished', 'job-errors'] }, system)).toBe(true);
  });

  it('matches tags on user-generated messages only', () => {
    expect(matchesMessageFilter({ 'filter-tag': 'nightly' }, user)).toBe(true);
    expect(matchesMessageFilter({ 'filter-tag': 'weekly' }, user)).toBe(false);
    expect(matchesMessageFilter({ 'filter-tag': 'nightly' }, alert)).toBe(false);
  });
});
