/**
 * What each role may do (CONTRACT section 1): `admin` ⊃ `operator` ⊃ `viewer`;
 * `worker` stands apart and only reaches `/api/worker/...`.
 *
 * @example
 *   allows(['operator'], 'viewer'); // true
 *   allows(['worker'], 'viewer');   // false
 */
import { own } from '../own.ts';
import type { Role } from './principal.ts';

const IMPLIES: Record<Role, readonly Role[]> = {
  admin: ['admin', 'operator', 'viewer'],
  operator: ['operator', 'viewer'],
  viewer: ['viewer'],
  worker: ['worker'],
};

export function allows(held: readonly Role[], required: Role): boolean {
  // Roles come from token claims: an unknown one (even `constructor`) grants nothing.
  return held.some((role) => own(IMPLIES, role)?.includes(required) === true);
}

/** Roles a human or automation credential may be given (`worker` comes only with a worker key). */
export const ASSIGNABLE_ROLES = ['admin', 'operator', 'viewer'] as const;
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];
