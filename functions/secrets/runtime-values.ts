/**
 * Run-time references for a worker that runs inside the control plane (the `cloud`
 * worker in the scheduled function): it reads secrets and variables from Firestore
 * directly instead of through `/api/worker/...`, with the same rules as an external
 * worker (a missing secret is an error; `${dyn|NAME||fallback}` falls back). The values
 * live only in the returned definition, which is run and never stored; `redact` keeps
 * them out of what the run reports.
 *
 * @example
 *   const r = await resolveRuntimeValues(deps, db, tenant, rendered);
 *   if (r.ok) await runJob(r.definition, { ..., report: (x) => record(r.redact(x)) });
 */
import type { Firestore } from '@google-cloud/firestore';
import { findRuntimeRefs, resolveRuntimeRefs } from '../../shared/runtime-refs.ts';
import type { AppDeps } from '../app/deps.ts';
import { type Redactor, secretRedactor } from '../runner/redact.ts';
import { variablesCollection } from '../variables/store.ts';
import { SecretStore } from './store.ts';

export type RuntimeResolution<T> =
  | { ok: true; definition: T; redact: Redactor }
  | { ok: false; missing: string[] };

export async function resolveRuntimeValues<T>(
  deps: Pick<AppDeps, 'config'>,
  db: Firestore,
  tenant: string,
  definition: T,
): Promise<RuntimeResolution<T>> {
  const refs = findRuntimeRefs(definition);
  if (!refs.secrets.length && !refs.variables.length) {
    return { ok: true, definition, redact: (value) => value };
  }
  const secrets = await new SecretStore(db, deps.config.secretsKey).reveal(tenant, refs.secrets);
  const variables: Record<string, string> = {};
  if (refs.variables.length) {
    const snaps = await db.getAll(...refs.variables.map((name) => variablesCollection(db, tenant).doc(name)));
    for (const snap of snaps) if (snap.exists) variables[snap.id] = snap.get('value') as string;
  }
  const result = resolveRuntimeRefs(definition, { secrets, variables });
  return result.ok
    ? { ok: true, definition: result.value, redact: secretRedactor(secrets) }
    : { ok: false, missing: result.missing };
}
