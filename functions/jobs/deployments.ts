/**
 * The job lifecycle: save, stage, deploy, undeploy, remove, and what a worker runs
 * (`renderStaged`). Route handlers, the worker API and the `cloud` worker call these; none
 * of them reads or writes a job some other way.
 *
 * Every decision is made inside the Firestore transaction that commits it, on reads made
 * in that transaction (the job, the contexts it renders with, the workers, the secrets):
 * Firestore may run the callback more than once, and each run decides afresh on what it
 * read. Messages to workers go through the outbox in the same transaction and are
 * delivered after the commit.
 *
 * @example
 *   const record = await deployJob(deps, principal, 'orders', ['cloud', 'w-1']);
 */

import type { DocumentSnapshot, Firestore, Transaction } from '@google-cloud/firestore';
import { type PageRequest, pageFrom } from '../../shared/api/paging.ts';
import { DEPLOYMENT_ERROR_MAX_CHARS } from '../../shared/api/worker-limits.ts';
import type { Principal } from '../../shared/auth/principal.ts';
import { ApiError, type ErrorDetail } from '../../shared/errors.ts';
import { outputKindOf } from '../../shared/events/output-metrics.ts';
import { cloudWorkerProblems } from '../../shared/job/cloud-worker-rules.ts';
import type { JobDefinition } from '../../shared/job/schema.ts';
import { assertMayReferenceSecrets, referencedSecrets } from '../../shared/job/secret-access.ts';
import { hasOwn, own } from '../../shared/own.ts';
import { changeDocument } from '../adapters/conditional-write.ts';
import type { AppDeps } from '../app/deps.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEventIn, buildEvent, type NewEvent } from '../events/event-log.ts';
import { writeTriggerRoutes } from '../messaging/event-relay.ts';
import { deliver, enqueueMessage, type OutboxEntry } from '../messaging/outbox.ts';
import { excerptWithin } from '../runner/excerpt.ts';
import { requestRuns } from '../runs/dispatch.ts';
import { SecretStore } from '../secrets/store.ts';
import { noteDeployed, noteUndeployed, readWorkerRecords } from '../workers/deployed-jobs.ts';
import { CLOUD_WORKER, unknownWorkers } from '../workers/registry.ts';
import { renderForWorkers, renderingFailures, type WorkerRendering } from './render-for-worker.ts';
import {
  type Deployment,
  type DeploymentState,
  definitionOf,
  type JobRecord,
  jobsCollection,
  type StagedJob,
  stagedRenderInput,
} from './store.ts';

type Actor = Pick<Principal, 'tenant' | 'roles'>;
type Queued = { id: string; entry: OutboxEntry };

/** Creates or updates a job from a definition already validated at the `stored` level. */
export async function saveJob(
  deps: AppDeps,
  actor: Actor,
  name: string,
  input: { definition: Record<string, unknown>; yaml?: string },
): Promise<{ record: JobRecord; created: boolean }> {
  const { definition, yaml } = input;
  if (definition.name !== name) {
    throw ApiError.invalid(`the definition is named ${String(definition.name)}, the path ${name}`, [
      { path: 'name', message: `must be ${name}, as in the URL` },
    ]);
  }
  assertMayReferenceSecrets(actor.roles, referencedSecrets(definition), 'save');
  const db = await deps.clients.firestore();
  const now = new Date().toISOString();
  return await db.runTransaction(async (tx) => {
    const ref = jobsCollection(db, actor.tenant).doc(name);
    const existing = (await tx.get(ref)).data() as JobRecord | undefined;
    const record: JobRecord = {
      name,
      version: (existing?.version ?? 0) + 1,
      created_at: existing?.created_at ?? now,
      updated_at: now,
      definition_json: JSON.stringify(definition),
      output_kind: outputKindOf(definition) ?? null,
      deployments: existing?.deployments ?? {},
      ...(existing?.staged ? { staged: existing.staged } : {}),
      ...(yaml !== undefined ? { source_yaml: yaml } : {}),
    };
    tx.set(ref, record);
    appendEventIn(tx, db, actor.tenant, {
      type: 'job-updated',
      source: 'server',
      job: name,
      payload: { version: record.version },
    });
    return { record, created: !existing };
  });
}

export async function loadJob(deps: AppDeps, tenant: string, name: string): Promise<JobRecord> {
  const snap = await jobsCollection(await deps.clients.firestore(), tenant)
    .doc(name)
    .get();
  const record = snap.data() as JobRecord | undefined;
  if (!record) throw ApiError.notFound(`no job ${name}`);
  return record;
}

/** What a page of jobs holds of each (its summary: staged has only its version). */
export type JobListing = Pick<
  JobRecord,
  'name' | 'version' | 'staged' | 'deployments' | 'updated_at' | 'output_kind'
>;

/** A page of the tenant's jobs, by name. */
export async function listJobs(
  deps: AppDeps,
  tenant: string,
  request: PageRequest,
): Promise<{ items: JobListing[]; next?: string }> {
  // Only what a job's summary shows: a page of 1,000 full jobs (definitions, staged
  // copies) is several megabytes to read and decode.
  let query = jobsCollection(await deps.clients.firestore(), tenant)
    .select('name', 'version', 'staged.version', 'deployments', 'updated_at', 'output_kind')
    .orderBy('name');
  if (request.after) query = query.startAfter(request.after[0]);
  const snap = await query.limit(request.limit + 1).get();
  return pageFrom(
    snap.docs.map((d) => d.data() as JobListing),
    request,
    (job) => [job.name],
  );
}

/**
 * Deletes a job and its context map (a job saved later under the same name inherits
 * nothing); refused (409) while any worker has it.
 */
export async function removeJob(deps: AppDeps, tenant: string, name: string): Promise<void> {
  const db = await deps.clients.firestore();
  await db.runTransaction(async (tx) => {
    const ref = jobsCollection(db, tenant).doc(name);
    const record = (await tx.get(ref)).data() as JobRecord | undefined;
    if (!record) throw ApiError.notFound(`no job ${name}`);
    const deployed = Object.keys(record.deployments ?? {});
    if (deployed.length)
      throw ApiError.conflict(`job ${name} is deployed to ${deployed.join(', ')}; undeploy it first`);
    const removeContext = await new ContextStore(db).readForRemoval(tx, tenant, { kind: 'job', name });
    tx.delete(ref);
    removeContext();
    appendEventIn(tx, db, tenant, {
      type: 'job-removed',
      source: 'server',
      job: name,
      payload: { deleted: true },
    });
  });
}

/** Stages the current version with the job's current context; every deployment re-renders with it. */
export async function stageJob(deps: AppDeps, actor: Actor, name: string): Promise<JobRecord> {
  return await stageAndDeploy(deps, actor, name, []);
}

/** Deploys to more workers, all or nothing; stages the current version on the way. */
export async function deployJob(
  deps: AppDeps,
  actor: Actor,
  name: string,
  workers: string[],
): Promise<JobRecord> {
  return await stageAndDeploy(deps, actor, name, [...new Set(workers)]);
}

/**
 * Stages the current version with the job's current context overrides, renders it for
 * every worker it will run on (the existing deployments plus `add`), checks each
 * deployment as a run would, and only if all pass commits the stage and the deployments
 * and tells the workers.
 */
async function stageAndDeploy(deps: AppDeps, actor: Actor, name: string, add: string[]): Promise<JobRecord> {
  const db = await deps.clients.firestore();
  const { tenant } = actor;
  const contexts = new ContextStore(db);
  const secretStore = new SecretStore(db, deps.config.secretsKey);
  const { record, outbox } = await db.runTransaction(async (tx) => {
    const ref = jobsCollection(db, tenant).doc(name);
    const current = (await tx.get(ref)).data() as JobRecord | undefined;
    if (!current) throw ApiError.notFound(`no job ${name}`);
    const missing = await unknownWorkers(db, tenant, add, tx);
    const addedWorkers = await readWorkerRecords(tx, db, tenant, add);
    if (missing.length) {
      throw ApiError.invalid(
        `unknown worker(s): ${missing.join(', ')}`,
        missing.map((w) => ({ path: 'workers', message: `no worker ${w}` })),
      );
    }
    const jobContext = await contexts.read(tenant, { kind: 'job', name }, tx);
    const definition = definitionOf(current);
    const workers = [...new Set([...Object.keys(current.deployments), ...add])];
    const renderings = await renderForWorkers(
      contexts,
      tenant,
      { name, definition, jobContext },
      workers,
      tx,
    );
    const failures = renderings.flatMap(deploymentProblems);
    if (failures.length)
      throw ApiError.invalid(
        `job ${name} cannot run on every worker it would be deployed to (${failures[0]!.message}); nothing was changed`,
        failures,
      );
    const secrets = referencedSecrets(
      definition,
      ...renderings.map((r) => (r.result.ok ? r.result.definition : undefined)),
    );
    assertMayReferenceSecrets(actor.roles, secrets, add.length ? 'deploy' : 'stage');
    const present = await secretStore.existing(tenant, secrets, tx);
    const absent = secrets.filter((ref) => !present.has(ref));
    if (absent.length) {
      throw ApiError.invalid(
        `job ${name} uses secrets that do not exist: ${absent.join(', ')}; nothing was changed`,
        absent.map((ref) => ({
          path: '',
          message: `no secret ${ref} (set it with sluice secret set ${ref} --value-stdin)`,
        })),
      );
    }
    const now = new Date().toISOString();
    const staged: StagedJob = {
      version: current.version,
      definition_json: current.definition_json,
      job_context_json: JSON.stringify(jobContext),
      staged_at: now,
      secrets,
    };
    const deployments: Record<string, Deployment> = {};
    for (const [worker, { next_due_ms: _, ...deployment }] of Object.entries(current.deployments))
      deployments[worker] = { ...deployment, version: current.version, updated_at: now };
    // Deploying (again) to a worker: pending until it reports on the new version.
    for (const worker of add)
      deployments[worker] = { state: 'pending', version: current.version, updated_at: now };
    tx.update(ref, { staged, deployments });
    await noteDeployed(tx, addedWorkers, name);
    writeTriggerRoutes(tx, db, tenant, name, definition, Object.keys(deployments));
    appendEventIn(tx, db, tenant, {
      type: 'job-staged',
      source: 'server',
      job: name,
      payload: { version: current.version },
    });
    for (const worker of add)
      appendEventIn(tx, db, tenant, {
        type: 'job-deployed',
        source: 'server',
        job: name,
        worker,
        payload: { version: current.version },
      });
    const queued = workers.map((worker) =>
      tellWorker(tx, db, tenant, worker, 'rerender-deployment', name, { version: current.version }),
    );
    return { record: { ...current, staged, deployments }, outbox: queued };
  });
  await deliverAll(deps, outbox);
  // On `cloud`, the new version runs now rather than at the next tick (a minute in the cloud).
  if (hasOwn(record.deployments, CLOUD_WORKER)) {
    await requestRuns(deps, [{ tenant, job: name, version: record.version }], 'due').catch((err) =>
      deps.logger.warn({ err, job: name }, 'could not request a run on the cloud worker; the next tick will'),
    );
  }
  return record;
}

/** Takes the job off some workers (all when `requested` is absent); the deployments disappear. */
export async function undeployJob(
  deps: AppDeps,
  tenant: string,
  name: string,
  requested?: string[],
): Promise<JobRecord> {
  const db = await deps.clients.firestore();
  const { record, outbox } = await db.runTransaction(async (tx) => {
    const ref = jobsCollection(db, tenant).doc(name);
    const current = (await tx.get(ref)).data() as JobRecord | undefined;
    if (!current) throw ApiError.notFound(`no job ${name}`);
    // All or nothing: a typo among the named workers undeploys from none of them.
    if (requested) await assertWorkersExist(db, tenant, current, requested, 'workers', tx);
    const removed = (requested ?? Object.keys(current.deployments)).filter((w) =>
      hasOwn(current.deployments, w),
    );
    const deployments = Object.fromEntries(
      Object.entries(current.deployments).filter(([w]) => !removed.includes(w)),
    );
    const removedWorkers = await readWorkerRecords(tx, db, tenant, removed);
    tx.update(ref, { deployments });
    await noteUndeployed(tx, removedWorkers, name);
    const staged = current.staged ? definitionOf(current.staged) : undefined;
    writeTriggerRoutes(tx, db, tenant, name, staged, Object.keys(deployments));
    const queued = removed.map((worker) => {
      appendEventIn(tx, db, tenant, {
        type: 'job-removed',
        source: 'server',
        job: name,
        worker,
        payload: {},
      });
      return tellWorker(tx, db, tenant, worker, 'deployed-job-removed', name, {});
    });
    return { record: { ...current, deployments }, outbox: queued };
  });
  await deliverAll(deps, outbox);
  return record;
}

/**
 * What `worker` runs: the staged definition rendered with the context it resolves to
 * there, held to the secrets approved at stage, and checked as a deploy checks it. The
 * one place a staged job becomes a runnable definition (worker API, `cloud` worker).
 */
export type StagedRendering =
  | { ok: true; definition: JobDefinition; version: number }
  | { ok: false; errors: ErrorDetail[]; version: number };

export async function renderStaged(
  contexts: ContextStore,
  tenant: string,
  record: JobRecord,
  worker: string,
): Promise<StagedRendering> {
  if (!record.staged)
    return { ok: false, version: record.version, errors: [{ path: '', message: 'the job is not staged' }] };
  const input = stagedRenderInput({ ...record, staged: record.staged });
  const [rendering] = await renderForWorkers(contexts, tenant, input, [worker]);
  const version = record.staged.version;
  const problems = deploymentProblems(rendering!);
  if (problems.length || !rendering!.result.ok) return { ok: false, version, errors: problems };
  return { ok: true, version, definition: rendering!.result.definition };
}

/**
 * The definition a worker would run, with the scope of every context key: the staged
 * version when there is one, else the saved one with the job's current context.
 */
export async function previewRendering(
  deps: AppDeps,
  tenant: string,
  name: string,
  worker: string,
): Promise<{ definition: JobDefinition; sources: WorkerRendering['resolved']['sources'] }> {
  const record = await loadJob(deps, tenant, name);
  const db = await deps.clients.firestore();
  await assertWorkersExist(db, tenant, record, [worker], 'worker');
  const contexts = new ContextStore(db);
  const input = record.staged
    ? stagedRenderInput({ ...record, staged: record.staged })
    : {
        name,
        definition: definitionOf(record),
        jobContext: await contexts.read(tenant, { kind: 'job', name }),
      };
  const [rendering] = await renderForWorkers(contexts, tenant, input, [worker]);
  if (!rendering!.result.ok)
    throw ApiError.invalid(
      `job ${name} does not render for worker ${worker}`,
      renderingFailures([rendering!]),
    );
  return { definition: rendering!.result.definition, sources: rendering!.resolved.sources };
}

export interface DeploymentStateChange {
  job: string;
  state: DeploymentState;
  error?: string;
  /** Who tells: the worker (its heartbeats, default) or the server (it went offline). */
  source?: 'worker' | 'server';
  /** Only a deployment now in this state changes (a sweep must not undo a newer report). */
  onlyFrom?: DeploymentState;
}

/**
 * Records the states a worker reports for its deployments (a worker's heartbeats): a
 * `job-state-transition` event for each change, nothing when a state is unchanged, and
 * nothing for a job no longer deployed there. Does the transaction's reads and returns its
 * writes: a transaction reads everything before it writes anything, so a caller with
 * writes of its own reads here, writes its own, then applies these. Runs of the `cloud`
 * worker record theirs without a transaction (`recordDeploymentStateUnlocked`).
 */
export async function readDeploymentStates(
  db: Firestore,
  tenant: string,
  worker: string,
  changes: DeploymentStateChange[],
  tx: Transaction,
): Promise<() => void> {
  if (!changes.length) return () => {};
  const refs = changes.map((change) => jobsCollection(db, tenant).doc(change.job));
  const snaps = await tx.getAll(...refs);
  const { FieldPath } = await import('@google-cloud/firestore');
  return () => {
    const now = new Date().toISOString();
    changes.forEach((change, i) => {
      const transition = stateTransition(snaps[i]!, worker, change, now);
      if (!transition) return;
      // A FieldPath, not `deployments.${worker}`: a dot in a worker id is not a nesting.
      tx.update(refs[i]!, new FieldPath('deployments', worker), transition.deployment);
      appendEventIn(tx, db, tenant, transition.event);
    });
  };
}

/**
 * Records one job's deployment state without a transaction: the state and its event are
 * written in one batch on condition that the job is as read, and read again if it changed.
 * For runners, which a kill can stop at any moment: one killed inside a transaction would
 * leave the job locked for about a minute (adapters/conditional-write.ts).
 */
export async function recordDeploymentStateUnlocked(
  db: Firestore,
  tenant: string,
  worker: string,
  change: DeploymentStateChange,
): Promise<void> {
  const { FieldPath } = await import('@google-cloud/firestore');
  const ref = jobsCollection(db, tenant).doc(change.job);
  await changeDocument(ref, async (snapshot) => {
    const transition = stateTransition(snapshot, worker, change, new Date().toISOString());
    if (!transition) return;
    const batch = db.batch();
    batch.update(ref, new FieldPath('deployments', worker), transition.deployment, {
      lastUpdateTime: snapshot.updateTime!,
    });
    appendEventIn(batch, db, tenant, transition.event);
    await batch.commit();
  });
}

/** What a state change writes to the job as read, and its event; undefined when there is nothing to change. */
function stateTransition(
  snapshot: DocumentSnapshot,
  worker: string,
  change: DeploymentStateChange,
  now: string,
): { deployment: Omit<Deployment, 'error'> & { error: string | null }; event: NewEvent } | undefined {
  // Own properties only: `deployments['toString']` is a function, not a deployment.
  const current = own((snapshot.data() as JobRecord | undefined)?.deployments, worker);
  // As much as a heartbeat carries: a reason reads the same whichever worker gave it.
  const error = change.error ? excerptWithin(change.error, DEPLOYMENT_ERROR_MAX_CHARS) : undefined;
  if (!current || (current.state === change.state && (current.error ?? undefined) === error))
    return undefined;
  if (change.onlyFrom && current.state !== change.onlyFrom) return undefined;
  return {
    deployment: { ...current, state: change.state, updated_at: now, error: error ?? null },
    event: {
      type: 'job-state-transition',
      source: change.source ?? 'worker',
      worker,
      job: change.job,
      payload: { from: current.state, to: change.state, ...(error ? { error } : {}) },
    },
  };
}

/**
 * Refuses (404) an undeploy or render naming workers that do not exist, counted as deploy
 * counts them (built-in workers always exist): otherwise a typo answers like a worker that
 * just does not have the job. A worker the job is still deployed to counts as existing,
 * record or not, so its deployment can always be seen and taken off.
 */
async function assertWorkersExist(
  db: Firestore,
  tenant: string,
  job: Pick<JobRecord, 'deployments'>,
  workers: string[],
  path: 'workers' | 'worker',
  tx?: Transaction,
): Promise<void> {
  const undeployed = [...new Set(workers)].filter((w) => !hasOwn(job.deployments, w));
  const missing = await unknownWorkers(db, tenant, undeployed, tx);
  if (!missing.length) return;
  const what = path === 'worker' ? 'unknown worker' : 'unknown worker(s)';
  throw new ApiError('not_found', `${what}: ${missing.join(', ')}`, {
    details: missing.map((w) => ({ path, message: `no worker ${w}` })),
  });
}

/** What keeps a rendering from running on its worker: render errors, and the `cloud` worker's rules. */
function deploymentProblems(rendering: WorkerRendering): ErrorDetail[] {
  if (!rendering.result.ok) return renderingFailures([rendering]);
  if (rendering.worker !== CLOUD_WORKER) return [];
  return cloudWorkerProblems(rendering.result.definition as Record<string, unknown>).map((p) => ({
    path: p.path,
    message: `cannot run on the cloud worker: ${p.message}`,
  }));
}

function tellWorker(
  tx: Transaction,
  db: Firestore,
  tenant: string,
  worker: string,
  type: 'rerender-deployment' | 'deployed-job-removed',
  job: string,
  payload: Record<string, unknown>,
): Queued {
  return enqueueMessage(
    tx,
    db,
    { tenant, worker },
    buildEvent({ type, source: 'server', job, worker, payload }),
  );
}

async function deliverAll(deps: AppDeps, outbox: Queued[]): Promise<void> {
  await Promise.all(outbox.map((o) => deliver(deps, o.id, o.entry)));
}
