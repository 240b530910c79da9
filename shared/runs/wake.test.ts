/** When object notifications request a run of a job on the cloud worker (wake.ts). */
import { describe, expect, it } from 'vitest';
import { decideWake, WakeTargetSchema, wakeAcknowledged } from './wake.ts';

const NOW = 1_000_000;
const woken = { deployed: true, woken: true };

describe('decideWake', () => {
  it('requests a run when none is requested or running, and acknowledges', () => {
    for (const nextDueMs of [undefined, null, NOW - 1, NOW]) {
      const decision = decideWake({ ...woken, ...(nextDueMs === undefined ? {} : { nextDueMs }) }, NOW);
      expect(decision, String(nextDueMs)).toBe('request');
      expect(wakeAcknowledged(decision)).toBe(true);
    }
    expect(decideWake({ ...woken, leaseExpiresMs: NOW - 1 }, NOW)).toBe('request');
  });

  it('leaves a requested run to read it, and brings a notification back later while a run holds the job', () => {
    expect(decideWake({ ...woken, nextDueMs: NOW + 1 }, NOW)).toBe('requested');
    expect(wakeAcknowledged('requested')).toBe(true);
    expect(decideWake({ ...woken, nextDueMs: NOW + 1, leaseExpiresMs: NOW + 1 }, NOW)).toBe('running');
    expect(wakeAcknowledged('running')).toBe(false);
  });

  it('does nothing for a job that is not deployed or has a trigger of its own', () => {
    expect(decideWake({ deployed: false, woken: true }, NOW)).toBe('not-woken');
    expect(decideWake({ deployed: true, woken: false }, NOW)).toBe('not-woken');
    expect(wakeAcknowledged('not-woken')).toBe(true);
  });

  it('takes only tenant and job names, so a push cannot point a document path elsewhere', () => {
    expect(WakeTargetSchema.safeParse({ tenant: 'acme', job: 'orders.v2' }).success).toBe(true);
    for (const target of [
      { tenant: 'acme', job: 'orders/leases/scheduled' },
      { tenant: 'acme/jobs/x', job: 'orders' },
      { tenant: 'acme', job: '..' },
      { tenant: 'acme', job: '' },
      { tenant: 'acme', job: 'orders', extra: 1 },
    ])
      expect(WakeTargetSchema.safeParse(target).success, JSON.stringify(target)).toBe(false);
  });
});
