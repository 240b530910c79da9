import { describe, expect, it } from 'vitest';
import { triggerJob } from './helpers.ts';

function errorsOf(trigger: unknown): string {
  const r = triggerJob(trigger);
  return r.ok ? '' : r.errors.map((e) => `${e.path}: ${e.message}`).join(' | ');
}

describe('triggers', () => {
  it('runs once without a trigger', () => {
    const r = triggerJob(undefined);
    expect(r.ok && r.gcs.trigger).toBe(undefined);
  });

  it('accepts an interval with defaults, random offset and a window', () => {
    const r = triggerJob({ interval: { duration: '5m' } });
    expect(r.ok && r.gcs.trigger).toEqual({ interval: { duration: '5m', 'random-offset': '0s' } });
    const w = triggerJob({ interval: { duration: '1h', 'random-offset': '30s', window: { size: '1h' } } });
    expect(w.ok && w.gcs.trigger?.interval?.window).toEqual({ size: '1h', offset: '0s' });
  });

  it('accepts cron with 5 fields or 6 with seconds first', () => {
    for (const cron of ['*/5 * * * *', '0 */5 * * * *', '0 3 * * MON-FRI']) {
      const r = triggerJob({ cron: { cron } });
      expect(r.ok && r.gcs.trigger?.cron).toEqual({ cron, immediate: false, 'random-offset': '0s' });
    }
    expect(triggerJob({ cron: { cron: '0 0 * * *', immediate: true } }).ok).toBe(true);
  });

  it('refuses bad cron expressions with the reason', () => {
    expect(errorsOf({ cron: { cron: '* * * *' } })).toContain('5 fields');
    expect(errorsOf({ cron: { cron: '0 0 0 * * * 2026' } })).toContain('got 7');
    expect(errorsOf({ cron: { cron: '61 * * * *' } })).toContain('Invalid value for minute');
  });

  it('accepts message triggers with every filter', () => {
    const message = {
      limit: 3,
      'filter-kind': 'user',
      'filter-source': ['job', 'worker', 'server'],
      'filter-worker': 'w1',
      'filter-job': 'other-job',
      'filter-type': ['user-generated', 'job-finished', 'runtime-artifact-update'],
      'filter-tag': 'nightly',
    };
    const r = triggerJob({ message });
    expect(r.ok && r.gcs.trigger?.message).toEqual(message);
    expect(triggerJob({ message: {} }).ok).toBe(true);
  });

  it('refuses unknown event types, kinds and sources', () => {
    expect(errorsOf({ message: { 'filter-type': ['job-finish'] } })).toContain(
      'did you mean `job-finished`?',
    );
    expect(errorsOf({ message: { 'filter-kind': 'users' } })).toContain('did you mean `user`?');
    expect(errorsOf({ message: { 'filter-source': ['cli'] } })).toContain('is not allowed here');
    expect(errorsOf({ message: { limit: 0 } })).toContain('must be at least 1');
  });

  it('accepts both window starts and refuses both at once', () => {
    const startTime = { 'start-time': '2026-01-01 00:00:00.000 +0000', 'highwatermark-file': '/var/hwm' };
    expect(
      triggerJob({ interval: { duration: '1h', window: { size: '1h', start: { 'start-time': startTime } } } })
        .ok,
    ).toBe(true);
    expect(
      triggerJob({
        cron: { cron: '0 * * * *', window: { size: '1h', offset: '5m', start: { tracked: '/var/t' } } },
      }).ok,
    ).toBe(true);
    expect(
      errorsOf({
        interval: {
          duration: '1h',
          window: { size: '1h', start: { 'start-time': startTime, tracked: 'x' } },
        },
      }),
    ).toContain('exactly one of start-time, tracked');
  });

  it('checks the start-time format', () => {
    const bad = { 'start-time': '2026-01-01T00:00:00Z', 'highwatermark-file': '/h' };
    expect(
      errorsOf({ interval: { duration: '1h', window: { size: '1h', start: { 'start-time': bad } } } }),
    ).toContain('does not match %Y-%m-%d %H:%M:%S%.3f %z');
    const impossible = { 'start-time': '2026-02-30 00:00:00.000 +0000', 'highwatermark-file': '/h' };
    expect(
      errorsOf({ interval: { duration: '1h', window: { size: '1h', start: { 'start-time': impossible } } } }),
    ).toContain('not a real date');
  });

  it('takes exactly one trigger form', () => {
    expect(errorsOf({})).toContain('trigger needs exactly one of: message, cron, interval');
    expect(errorsOf({ interval: { duration: '1m' }, cron: { cron: '* * * * *' } })).toContain(
      'found cron and interval',
    );
    expect(errorsOf({ interval: { duration: '1m', jitter: '1s' } })).toContain('unknown field `jitter`');
    expect(errorsOf({ interval: {} })).toContain('required field `duration` is missing');
  });
});
