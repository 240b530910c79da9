/**
 * Resolution against stored state: the three override maps in one read, plus the
 * `context:` block of the job's stored definition (`tenants/{t}/jobs/{job}`, field
 * `definition`), when the job exists.
 */
import type { ContextMap } from '../../shared/context/map.ts';
import { type ResolvedContext, resolveContext } from '../../shared/context/resolve.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import type { ContextStore } from './store.ts';

export async function resolveContextFor(
  store: ContextStore,
  tenant: string,
  job: string,
  worker: string,
  definitionDefaults?: ContextMap,
): Promise<ResolvedContext> {
  const [[jobMap, workerMap, global], definition] = await Promise.all([
    store.readMany(tenant, [{ kind: 'job', name: job }, { kind: 'worker', id: worker }, { kind: 'global' }]),
    definitionDefaults ?? storedDefinitionDefaults(store, tenant, job),
  ]);
  return resolveContext({ job, worker, jobMap: jobMap!, workerMap: workerMap!, global: global!, definition });
}

async function storedDefinitionDefaults(
  store: ContextStore,
  tenant: string,
  job: string,
): Promise<ContextMap> {
  const snap = await tenantCollection(store.db, tenant, 'jobs').doc(job).get();
  const json = snap.get('definition_json') as string | undefined;
  return json ? ((JSON.parse(json) as { context?: ContextMap }).context ?? {}) : {};
}
