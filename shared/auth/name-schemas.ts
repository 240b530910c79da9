/**
 * The zod schemas of names, declared once: every route that takes a worker id, a tenant,
 * a scope or a secret name validates with these, so the rule and its message are the same
 * everywhere (and names every object inherits, like `constructor`, are refused).
 */
import { z } from 'zod';
import { parseDuration } from '../duration.ts';
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

/** The longest a key or secret may be made to last: past this, an expiry date is no date. */
export const MAX_CREDENTIAL_LIFETIME = '3650d';

/** How long a new API key or enrollment secret lasts (`expires_in`): a duration up to 10 years. */
export const CredentialLifetime = z
  .string()
  .max(32)
  .superRefine((value, ctx) => {
    let ms: number;
    try {
      ms = parseDuration(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return;
    }
    if (ms <= 0 || ms > parseDuration(MAX_CREDENTIAL_LIFETIME))
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration from 1s to ${MAX_CREDENTIAL_LIFETIME} (10 years), such as 90d or 12h`,
      });
  });
