/**
 * Names of principals and tenants. Usernames are ASCII after NFKC normalisation so
 * that look-alikes (Cyrillic `а` for Latin `a`, full-width letters) cannot pose as
 * another user.
 */

export const USERNAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const TENANT_NAME = /^[a-z0-9][a-z0-9-]{1,62}$/;
export const RESOURCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const DEFAULT_TENANT = 'default';

/**
 * Names every JavaScript object answers to (`constructor`, `toString`, `valueOf`,
 * `hasOwnProperty`, `__proto__`, ...). They are refused as names of tenants, workers,
 * users, jobs, scopes and keys: a second line of defence behind own-property lookups
 * (`shared/own.ts`), so no stored map can hold such a key.
 */
export const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

export function isPrototypeName(name: string): boolean {
  return PROTOTYPE_NAMES.has(name);
}

export const PROTOTYPE_NAME_MESSAGE = 'this name is reserved (it is a property of every JavaScript object)';
export const BOOTSTRAP_ADMIN = 'admin';

/** The canonical form of a username, or undefined when it is not an acceptable one. */
export function canonicalUsername(input: string): string | undefined {
  const normalised = input.normalize('NFKC');
  return USERNAME.test(normalised) ? normalised : undefined;
}
