/**
 * The zod schemas of names, declared once: every route that takes a worker id, a tenant,
 * a scope or a secret name validates with these, so the rule and its message are the same
 * everywhere (and names every object inherits, like `constructor`, are refused).
 */
import { z } from 'zod';
import { isPrototypeName, PROTOTYPE_NAME_MESSAGE, RESOURCE_ID, TENANT_NAME } from './names.ts';

/** A name of a resource (worker, scope, secret, key): letters, digits, `.` `_` `-`, at most 128. */
export function resourceId(what: string) {
  return z
    .string()
    .regex(RESOURCE_ID, `${what} use letters, digits, . _ - (at most 128)`)
    .refine((name) => !isPrototypeName(name), PROTOTYPE_NAME_MESSAGE);
}

export const WorkerId = resourceId('worker ids');

export const TenantName = z
  .string()
  .regex(TENANT_NAME, 'tenant names are 2-63 lowercase letters, digits and -')
  .refine((name) => !isPrototypeName(name), PROTOTYPE_NAME_MESSAGE);
