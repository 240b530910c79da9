/**
 * What the UI offers for a user's roles: context editors for admins, deploying for operators
 * and admins; non-admins land on Jobs (the Context workspace at `/` would only answer 403).
 */
import { describe, expect, it } from 'vitest';
import { can, homePath } from '../../web/src/lib/roles.ts';

describe('can', () => {
  it('follows admin ⊃ operator ⊃ viewer', () => {
    expect(can({ roles: ['admin'] }, 'admin')).toBe(true);
    expect(can({ roles: ['admin'] }, 'operator')).toBe(true);
    expect(can({ roles: ['operator'] }, 'operator')).toBe(true);
    expect(can({ roles: ['operator'] }, 'admin')).toBe(false);
    expect(can({ roles: ['viewer'] }, 'operator')).toBe(false);
    expect(can({ roles: ['viewer'] }, 'viewer')).toBe(true);
  });

  it('grants nothing without a user, or for an unknown role', () => {
    expect(can(null, 'viewer')).toBe(false);
    expect(can(undefined, 'viewer')).toBe(false);
    expect(can({ roles: ['constructor'] }, 'viewer')).toBe(false);
    expect(can({ roles: ['worker'] }, 'viewer')).toBe(false);
  });
});

describe('homePath', () => {
  it('is the Context workspace for admins and Jobs for everyone else', () => {
    expect(homePath({ roles: ['admin'] })).toBe('/context');
    expect(homePath({ roles: ['operator'] })).toBe('/jobs');
    expect(homePath({ roles: ['viewer'] })).toBe('/jobs');
    expect(homePath(null)).toBe('/jobs');
  });
});
