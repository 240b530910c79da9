/**
 * What a worker runs: the staged definition rendered with the context it resolves to on
 * that worker (the staged job overrides, the live worker and global maps, the definition's
 * defaults). Rendering for many workers reuses one parsed definition, so templates compile once.
 */
import type { Transaction } from '@google-cloud/firestore';
import type { ContextMap } from '../../shared/context/map.ts';
import { type RenderResult, renderJob } from '../../shared/context/render.ts';
import { type ResolvedContext, resolveContext } from '../../shared/context/resolve.ts';
import { unapprovedSecretProblems } from '../../shared/job/secret-access.ts';
import type { ContextStore } from '../contexts/store.ts';

export interface RenderInput {
  name: string;
  definition: Record<string, unknown>;
  jobContext: ContextMap;
  /**
   * When set (a staged job on its way to a worker), a rendering that references any other
   * secret fails: a context change must not slip a secret into a job nobody approved it for.
   */
  approvedSecrets?: readonly string[];
}

export interface WorkerRendering {
  worker: string;
  result: RenderResult;
  resolved: ResolvedContext;
}

export async function renderForWorkers(
  contexts: ContextStore,
  tenant: string,
  job: RenderInput,
  workers: string[],
  tx?: Transaction,
): Promise<WorkerRendering[]> {
  const maps = await contexts.readMany(
    tenant,
    [{ kind: 'global' }, ...workers.map((id) => ({ kind: 'worker' as const, id }))],
    tx,
  );
  const global = maps[0]!;
  return workers.map((worker, i) => {
    const resolved = resolveContext({
      job: job.name,
      worker,
      jobMap: job.jobContext,
      workerMap: maps[i + 1]!,
      global,
      definition: (job.definition.context as ContextMap | undefined) ?? {},
    });
    const result = renderJob(job.definition, resolved.context);
    if (result.ok && job.approvedSecrets) {
      const problems = unapprovedSecretProblems(result.definition, job.approvedSecrets);
      if (problems.length) return { worker, resolved, result: { ok: false, errors: problems } };
    }
    return { worker, resolved, result };
  });
}

/** The contract's error details for failed renderings, each naming its worker. */
export function renderingFailures(renderings: WorkerRendering[]) {
  return renderings.flatMap((r) =>
    r.result.ok
      ? []
      : r.result.errors.map((e) => ({ path: e.path, message: `worker ${r.worker}: ${e.message}` })),
  );
}
