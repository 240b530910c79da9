/**
 * Who may add, remove and reset whom (CONTRACT section 1 and 9). Users are global: one
 * password for every tenant they belong to. So whoever may set a user's password holds
 * all of that user's memberships, and a tenant admin may only do it for users who belong
 * to its tenant alone and are not the system admin. Pulling an existing user into a
 * tenant is the system admin's act: a tenant admin could otherwise pull anyone in and
 * then "manage" them.
 *
 * @example
 *   const how = addMemberDecision(caller, 'acme', existingUser, { withPassword: false });
 */
import { ApiError } from '../errors.ts';
import { hasOwn } from '../own.ts';
import type { Principal, Role } from './principal.ts';
import { allows } from './roles.ts';

/** What these rules need to know of a stored user. */
export interface UserFacts {
  memberships: Readonly<Record<string, Role>>;
  system_admin: boolean;
}

type Caller = Pick<Principal, 'kind' | 'subject' | 'tenant' | 'roles' | 'systemAdmin'>;

/** `create` a new user, or let an existing one `join` the tenant; throws when neither is allowed. */
export function addMemberDecision(
  caller: Caller,
  username: string,
  tenant: string,
  existing: UserFacts | undefined,
  options: { withPassword: boolean },
): 'create' | 'join' {
  if (!caller.systemAdmin) {
    // The same answers whether or not the name exists elsewhere: a tenant admin learns
    // nothing of other tenants' users from them.
    if (!options.withPassword) {
      throw ApiError.forbidden(
        'only the system admin may add an existing user to a tenant; a new user needs a password',
      );
    }
    if (existing) throw ApiError.conflict(`username ${username} is not available`);
    return 'create';
  }
  if (existing && hasOwn(existing.memberships, tenant))
    throw ApiError.conflict(`user ${username} is already a member of ${tenant}`);
  if (existing && options.withPassword) {
    throw ApiError.conflict(`user ${username} exists; omit the password to add them to tenant ${tenant}`);
  }
  if (!existing && !options.withPassword) {
    throw ApiError.invalid('a new user needs a password', [
      { path: 'password', message: 'required for a new user' },
    ]);
  }
  return existing ? 'join' : 'create';
}

/** Whether removing the user from the tenant `delete`s it (no tenant left) or it only `leave`s. */
export function removeMemberDecision(
  caller: Caller,
  username: string,
  tenant: string,
  user: UserFacts | undefined,
): 'delete' | 'leave' {
  if (!user || !hasOwn(user.memberships, tenant))
    throw ApiError.notFound(`no user ${username} in tenant ${tenant}`);
  if (user.system_admin && !caller.systemAdmin)
    throw ApiError.forbidden('only the system admin may remove the system admin from a tenant');
  const others = Object.keys(user.memberships).filter((name) => name !== tenant);
  return others.length === 0 && !user.system_admin ? 'delete' : 'leave';
}

/**
 * `self`: the user changes its own password (the current one is required); `reset`: an
 * admin sets another user's password. Throws 403 otherwise, and for a tenant admin the
 * same 403 whether the user exists elsewhere or not at all.
 */
export function passwordChangeDecision(
  caller: Caller,
  username: string,
  user: UserFacts | undefined,
): 'self' | 'reset' {
  if (caller.kind === 'user' && caller.subject === username) {
    if (!user) throw ApiError.notFound(`no user ${username}`);
    return 'self';
  }
  if (caller.kind === 'worker' || !allows(caller.roles, 'admin'))
    throw ApiError.forbidden('only the user or an admin may change a password');
  if (caller.systemAdmin) {
    if (!user) throw ApiError.notFound(`no user ${username}`);
    return 'reset';
  }
  const memberships = user ? Object.keys(user.memberships) : [];
  if (!user || user.system_admin || memberships.length !== 1 || memberships[0] !== caller.tenant) {
    throw ApiError.forbidden(
      `an admin of tenant ${caller.tenant} may only reset the password of users who belong to ` +
        `${caller.tenant} alone; ask the system admin`,
    );
  }
  return 'reset';
}
