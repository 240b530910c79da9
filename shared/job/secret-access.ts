/**
 * Referencing a secret is reading it: a job that puts `${secret|scope/name}` into a URL
 * sends the value wherever the URL points. So saving, staging or deploying a job whose
 * definition or rendering references a secret needs `admin`, like reading the secret
 * would. What a job may reference is judged on everything a worker could receive: the
 * definition (its own `context:` block included) and each rendering, since a tenant
 * context value rendered in by `{{key}}` can carry a reference too.
 *
 * Whoever stages a job approves the secrets it references then (`StagedJob.secrets`);
 * a later rendering that references any other (say, after a context change) is refused
 * for that job until an admin stages it again.
 *
 * @example
 *   const secrets = referencedSecrets(definition, ...renderedDefinitions);
 *   assertMayReferenceSecrets(principal.roles, secrets, 'deploy');  // 403 naming them, unless admin
 */

import type { Role } from '../auth/principal.ts';
import { allows } from '../auth/roles.ts';
import { ApiError, type ErrorDetail } from '../errors.ts';
import { findRuntimeRefs } from '../runtime-refs.ts';

/** Every secret referenced by any of `values` (definitions, renderings), sorted, once each. */
export function referencedSecrets(...values: unknown[]): string[] {
  const all = new Set<string>();
  for (const value of values) for (const ref of findRuntimeRefs(value).secrets) all.add(ref);
  return [...all].sort();
}

/** 403 naming the secrets, unless the caller is an admin or there are none. */
export function assertMayReferenceSecrets(
  roles: readonly Role[],
  secrets: readonly string[],
  action: 'save' | 'stage' | 'deploy',
): void {
  if (!secrets.length || allows(roles, 'admin')) return;
  throw ApiError.forbidden(
    `only an admin may ${action} a job that references secrets (referencing a secret reveals it to the job): ${secrets.join(', ')}`,
  );
}

/** Problems for a rendering that references secrets nobody approved when the job was staged. */
export function unapprovedSecretProblems(rendered: unknown, approved: readonly string[]): ErrorDetail[] {
  const unapproved = referencedSecrets(rendered).filter((ref) => !approved.includes(ref));
  if (!unapproved.length) return [];
  return [
    {
      path: '',
      message: `references ${unapproved.map((ref) => `secret ${ref}`).join(', ')}, which was not referenced when the job was staged; an admin must stage or deploy it again`,
    },
  ];
}
