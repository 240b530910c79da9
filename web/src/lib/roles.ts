/**
 * What the signed-in user's roles let the UI offer (CONTRACT section 1: `admin` ⊃
 * `operator` ⊃ `viewer`): context pages and editors need `admin`, deploying needs
 * `operator`. The API decides in the end; the UI only leaves out what it would refuse.
 * Pure, so it is tested without a browser.
 *
 * @example
 *   can({ roles: ['operator'] }, 'admin') // false
 *   homePath({ roles: ['viewer'] })       // '/jobs'
 */
import type { Role } from '../../../shared/auth/principal.ts';
import { allows } from '../../../shared/auth/roles.ts';

export function can(me: { roles: readonly string[] } | null | undefined, role: Role): boolean {
  return me ? allows(me.roles as readonly Role[], role) : false;
}

/** Where a user lands (`/`, after sign-in, the brand link): the Context workspace for admins, else Jobs. */
export function homePath(me: { roles: readonly string[] } | null | undefined): string {
  return can(me, 'admin') ? '/context' : '/jobs';
}
