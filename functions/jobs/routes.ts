/**
 * The `jobs` family (CONTRACT section 4): save a job from YAML (kept as written) or
 * JSON, list and read it, stage it, deploy it to workers all-or-nothing, undeploy it,
 * render it for a worker, delete it (409 while deployed). Stage and deploy render for
 * every affected worker first; one failure refuses the whole request and changes nothing.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { WorkerId } from '../../shared/auth/name-schemas.ts';
import { ApiError } from '../../shared/errors.ts';
import { cloudWorkerProblems } from '../../shared/job/cloud-worker-rules.ts';
import { parseJobYaml } from '../../shared/job/parse.ts';
import { JobName } from '../../shared/job/schema.ts';
import { assertMayReferenceSecrets, referencedSecrets } from '../../shared/job/secret-access.ts';
import { validateJob } from '../../shared/job/validate.ts';
import { hasOwn } from '../../shared/own.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEventIn, buildEvent } from '../events/event-log.ts';
import { deliver, enqueueMessage } from '../messaging/outbox.ts';
import { SecretStore } from '../secrets/store.ts';
import { BUILT_IN_WORKERS } from '../workers/registry.ts';
import { renderForWorkers, renderingFailures } from './render-for-worker.ts';
import { definitionOf, type JobRecord, jobState, jobsCollection, stagedRenderInput } from './store.ts';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
const NameParam = z.object({
  name: JobName,
});
const WorkerList = z.array(WorkerId).max(1000);
const DeploymentView = z.object({
  worker: z.string(),
  state: z.string(),
  version: z.number(),
  updated_at: z.string(),
});
const JobSummary = z
  .object({
    name: z.string(),
    version: z.number(),
    state: z.enum(['saved', 'staged', 'deployed']),
    staged_version: z.number().nullable(),
    deployments: z.array(DeploymentView),
    updated_at: z.string(),
  })
  .openapi('JobSummary');
const JobView = JobSummary.extend({ definition: z.record(z.string(), z.unknown()) }).openapi('Job');
const Saved = z
  .object({
    name: z.string(),
    version: z.number(),
    updated_at: z.string(),
    definition: z.record(z.string(), z.unknown()),
  })
  .openapi('SavedJob');

export function jobsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/jobs', authenticate(deps), requireRole('viewer'));
  routes.use('/jobs/*', authenticate(deps), requireRole('viewer'));
  const operator = [requireRole('operator')];
  const db = () => deps.clients.firestore();

  routes.openapi(
    createRoute({
      method: 'put',
      path: '/jobs/{name}',
      tags: ['jobs'],
      summary: 'Create or update a job from YAML (kept as written) or JSON',
      security: BEARER,
      middleware: operator,
      request: {
        params: NameParam,
        body: {
          required: true,
          content: {
            'application/yaml': { schema: z.string() },
            'application/json': { schema: z.unknown() },
          },
        },
      },
      responses: {
        200: json(Saved, 'Updated'),
        201: json(Saved, 'Created'),
        ...errors(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const { definition, yaml } = await readDefinition(c);
      if (definition.name !== name) {
        throw ApiError.invalid(`the definition is named ${String(definition.name)}, the path ${name}`, [
          { path: 'name', message: `must be ${name}, as in the URL` },
        ]);
      }
      assertMayReferenceSecrets(c.get('principal').roles, referencedSecrets(definition), 'save');
      const firestore = await db();
      const tenant = c.get('principal').tenant;
      const now = new Date().toISOString();
      const saved = await firestore.runTransaction(async (tx) => {
        const ref = jobsCollection(firestore, tenant).doc(name);
        const existing = (await tx.get(ref)).data() as JobRecord | undefined;
        const record: JobRecord = {
          name,
          version: (existing?.version ?? 0) + 1,
          created_at: existing?.created_at ?? now,
          updated_at: now,
          definition_json: JSON.stringify(definition),
          deployments: existing?.deployments ?? {},
          ...(existing?.staged ? { staged: existing.staged } : {}),
          ...(yaml !== undefined ? { source_yaml: yaml } : {}),
        };
        tx.set(ref, record);
        appendEventIn(tx, firestore, tenant, {
          type: 'job-updated',
          source: 'server',
          job: name,
          payload: { version: record.version },
        });
        return { record, created: !existing };
      });
      const answer = { name, version: saved.record.version, updated_at: now, definition };
      return c.json(answer, saved.created ? 201 : 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/jobs',
      tags: ['jobs'],
      summary: 'Jobs with their state, staged version and deployments',
      security: BEARER,
      responses: { 200: json(z.array(JobSummary), 'Jobs'), ...errors(401, 403) },
    }),
    async (c) => {
      const snap = await jobsCollection(await db(), c.get('principal').tenant)
        .orderBy('name')
        .get();
      return c.json(
        snap.docs.map((d) => summary(d.data() as JobRecord)),
        200,
      );
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{name}',
      tags: ['jobs'],
      summary: 'One job as JSON, or the YAML as saved with `Accept: application/yaml`',
      security: BEARER,
      request: { params: NameParam },
      responses: {
        200: {
          description: 'The job',
          content: { 'application/json': { schema: JobView }, 'application/yaml': { schema: z.string() } },
        },
        ...errors(401, 403, 404),
      },
    }),
    async (c) => {
      const record = await load(c, c.req.valid('param').name);
      if (YAML_TYPES.some((t) => (c.req.header('accept') ?? '').includes(t))) {
        return c.body(record.source_yaml ?? JSON.stringify(definitionOf(record), null, 2), 200, {
          'content-type': 'application/yaml; charset=utf-8',
        });
      }
      return c.json({ ...summary(record), definition: definitionOf(record) }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/jobs/{name}',
      tags: ['jobs'],
      summary: 'Delete a job (409 while it is deployed)',
      security: BEARER,
      middleware: operator,
      request: { params: NameParam },
      responses: { 204: noContent('Deleted'), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const firestore = await db();
      const tenant = c.get('principal').tenant;
      await firestore.runTransaction(async (tx) => {
        const ref = jobsCollection(firestore, tenant).doc(name);
        const record = (await tx.get(ref)).data() as JobRecord | undefined;
        if (!record) throw ApiError.notFound(`no job ${name}`);
        const deployed = Object.keys(record.deployments ?? {});
        if (deployed.length)
          throw ApiError.conflict(`job ${name} is deployed to ${deployed.join(', ')}; undeploy it first`);
        tx.delete(ref);
        appendEventIn(tx, firestore, tenant, {
          type: 'job-removed',
          source: 'server',
          job: name,
          payload: { deleted: true },
        });
      });
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{name}/stage',
      tags: ['jobs'],
      summary:
        'Stage the current version with the job’s current context; running deployments re-render with it',
      security: BEARER,
      middleware: operator,
      request: { params: NameParam },
      responses: {
        200: json(z.object({ staged_version: z.number() }), 'Staged'),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const record = await stageAndDeploy(c, name, { add: [] });
      return c.json({ staged_version: record.staged!.version }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{name}/deploy',
      tags: ['jobs'],
      summary: 'Deploy to workers, all or nothing (stages the current version and job context)',
      security: BEARER,
      middleware: operator,
      request: {
        params: NameParam,
        ...body(z.strictObject({ workers: WorkerList.min(1) }).openapi('DeployRequest')),
      },
      responses: {
        200: json(
          z.object({ name: z.string(), version: z.number(), deployments: z.array(DeploymentView) }),
          'Deployments',
        ),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const { workers } = c.req.valid('json');
      const record = await stageAndDeploy(c, name, { add: [...new Set(workers)] });
      return c.json({ name, version: record.staged!.version, deployments: deploymentsOf(record) }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{name}/undeploy',
      tags: ['jobs'],
      summary: 'Remove the job from some workers, or from all when `workers` is absent',
      security: BEARER,
      middleware: operator,
      request: {
        params: NameParam,
        body: {
          required: false,
          content: { 'application/json': { schema: z.strictObject({ workers: WorkerList.optional() }) } },
        },
      },
      responses: {
        200: json(
          z.object({ name: z.string(), deployments: z.array(DeploymentView) }),
          'Remaining deployments',
        ),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const requested = (c.req.valid('json') as { workers?: string[] } | undefined)?.workers;
      const firestore = await db();
      const tenant = c.get('principal').tenant;
      const { record, outbox } = await firestore.runTransaction(async (tx) => {
        const ref = jobsCollection(firestore, tenant).doc(name);
        const current = (await tx.get(ref)).data() as JobRecord | undefined;
        if (!current) throw ApiError.notFound(`no job ${name}`);
        const removed = (requested ?? Object.keys(current.deployments)).filter((w) =>
          hasOwn(current.deployments, w),
        );
        const deployments = Object.fromEntries(
          Object.entries(current.deployments).filter(([w]) => !removed.includes(w)),
        );
        tx.update(ref, { deployments });
        const queued = removed.map((worker) => {
          appendEventIn(tx, firestore, tenant, {
            type: 'job-removed',
            source: 'server',
            job: name,
            worker,
            payload: {},
          });
          return enqueueMessage(
            tx,
            firestore,
            { tenant, worker },
            buildEvent({ type: 'deployed-job-removed', source: 'server', job: name, worker, payload: {} }),
          );
        });
        return { record: { ...current, deployments }, outbox: queued };
      });
      await Promise.all(outbox.map((o) => deliver(deps, o.id, o.entry)));
      return c.json({ name, deployments: deploymentsOf(record) }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{name}/render',
      tags: ['jobs'],
      summary: 'The definition a worker would run, with the scope of every context key',
      security: BEARER,
      request: { params: NameParam, query: z.object({ worker: WorkerId }) },
      responses: {
        200: json(
          z.object({
            definition: z.record(z.string(), z.unknown()),
            sources: z.record(z.string(), z.string()),
          }),
          'Rendered',
        ),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const { worker } = c.req.valid('query');
      const record = await load(c, name);
      const contexts = new ContextStore(await db());
      const input = record.staged
        ? stagedRenderInput({ ...record, staged: record.staged })
        : {
            name,
            definition: definitionOf(record),
            jobContext: await contexts.read(c.get('principal').tenant, { kind: 'job', name }),
          };
      const [rendering] = await renderForWorkers(contexts, c.get('principal').tenant, input, [worker]);
      if (!rendering!.result.ok)
        throw ApiError.invalid(
          `job ${name} does not render for worker ${worker}`,
          renderingFailures([rendering!]),
        );
      return c.json(
        {
          definition: rendering!.result.definition as Record<string, unknown>,
          sources: rendering!.resolved.sources,
        },
        200,
      );
    },
  );

  async function load(c: Context<AppEnv>, name: string): Promise<JobRecord> {
    const record = (
      await jobsCollection(await db(), c.get('principal').tenant)
        .doc(name)
        .get()
    ).data() as JobRecord | undefined;
    if (!record) throw ApiError.notFound(`no job ${name}`);
    return record;
  }

  /**
   * Stages the current version with the job's current context overrides, renders it for
   * every worker it will run on (the existing deployments plus `add`), and only if all
   * render, commits the stage and the deployments and tells the workers.
   */
  async function stageAndDeploy(
    c: Context<AppEnv>,
    name: string,
    { add }: { add: string[] },
  ): Promise<JobRecord> {
    const firestore = await db();
    const tenant = c.get('principal').tenant;
    const contexts = new ContextStore(firestore);
    await assertWorkersExist(firestore, tenant, add);
    const { record, outbox } = await firestore.runTransaction(async (tx) => {
      const ref = jobsCollection(firestore, tenant).doc(name);
      const current = (await tx.get(ref)).data() as JobRecord | undefined;
      if (!current) throw ApiError.notFound(`no job ${name}`);
      const jobContext = await contexts.read(tenant, { kind: 'job', name });
      const definition = definitionOf(current);
      const workers = [...new Set([...Object.keys(current.deployments), ...add])];
      // Also on a re-stage: a new version of a job already on `cloud` must still run there.
      if (workers.includes('cloud')) assertRunsOnCloud(definition);
      const renderings = await renderForWorkers(contexts, tenant, { name, definition, jobContext }, workers);
      const failures = renderingFailures(renderings);
      if (failures.length)
        throw ApiError.invalid(`job ${name} does not render for every worker; nothing was changed`, failures);
      const secrets = referencedSecrets(
        definition,
        ...renderings.map((r) => (r.result.ok ? r.result.definition : undefined)),
      );
      assertMayReferenceSecrets(c.get('principal').roles, secrets, add.length ? 'deploy' : 'stage');
      const present = await new SecretStore(firestore, deps.config.secretsKey).existing(tenant, secrets);
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
      const staged = {
        version: current.version,
        definition_json: current.definition_json,
        job_context_json: JSON.stringify(jobContext),
        staged_at: now,
        secrets,
      };
      const deployments = { ...current.deployments };
      for (const worker of add)
        deployments[worker] = { state: 'pending', version: current.version, updated_at: now };
      for (const worker of Object.keys(deployments))
        deployments[worker] = { ...deployments[worker]!, version: current.version, updated_at: now };
      tx.update(ref, { staged, deployments });
      appendEventIn(tx, firestore, tenant, {
        type: 'job-staged',
        source: 'server',
        job: name,
        payload: { version: current.version },
      });
      for (const worker of add)
        appendEventIn(tx, firestore, tenant, {
          type: 'job-deployed',
          source: 'server',
          job: name,
          worker,
          payload: { version: current.version },
        });
      const queued = workers.map((worker) =>
        enqueueMessage(
          tx,
          firestore,
          { tenant, worker },
          buildEvent({
            type: 'rerender-deployment',
            source: 'server',
            job: name,
            worker,
            payload: { version: current.version },
          }),
        ),
      );
      return { record: { ...current, staged, deployments } as JobRecord, outbox: queued };
    });
    await Promise.all(outbox.map((o) => deliver(deps, o.id, o.entry)));
    return record;
  }

  return {
    name: 'jobs',
    bodyMediaTypes: [
      { method: 'PUT', path: /^\/api\/jobs\/[^/]+$/, types: ['application/json', ...YAML_TYPES] },
    ],
    routes,
  };
}

async function readDefinition(
  c: Context<AppEnv>,
): Promise<{ definition: Record<string, unknown>; yaml?: string }> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (type === 'application/json') {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch (err) {
      throw ApiError.invalid(`the body is not valid JSON: ${(err as Error).message}`);
    }
    const result = validateJob(value, { level: 'stored' });
    if (!result.ok)
      throw ApiError.invalid(
        `invalid job: ${result.errors[0]!.path}: ${result.errors[0]!.message}`,
        result.errors,
      );
    return { definition: value as Record<string, unknown> };
  }
  const result = parseJobYaml(bytes, { level: 'stored' });
  if (!result.ok)
    throw ApiError.invalid(
      `invalid job: ${result.errors[0]!.path || '(file)'}: ${result.errors[0]!.message}`,
      result.errors,
    );
  return { definition: result.raw as Record<string, unknown>, yaml: new TextDecoder().decode(bytes) };
}

/** The `cloud` worker runs in a scheduled function and receives no messages: message triggers can't run there. */
function assertRunsOnCloud(definition: Record<string, unknown>): void {
  const input = definition.input as Record<string, { trigger?: { message?: unknown } }>;
  if (Object.values(input).some((kind) => kind?.trigger?.message !== undefined)) {
    throw ApiError.invalid(
      'message-triggered jobs run on workers that receive messages, not on the cloud worker',
      [{ path: 'workers', message: 'deploy this job to a worker running `sluice worker run` (or `local`)' }],
    );
  }
  const problems = cloudWorkerProblems(definition);
  if (problems.length)
    throw ApiError.invalid(`cannot run on the cloud worker: ${problems[0]!.message}`, problems);
}

async function assertWorkersExist(
  firestore: FirebaseFirestore.Firestore,
  tenant: string,
  workers: string[],
): Promise<void> {
  const candidates = workers.filter((w) => !(BUILT_IN_WORKERS as readonly string[]).includes(w));
  if (!candidates.length) return;
  const snaps = await firestore.getAll(
    ...candidates.map((w) => firestore.collection('tenants').doc(tenant).collection('workers').doc(w)),
  );
  const missing = candidates.filter((_, i) => !snaps[i]!.exists);
  if (missing.length) {
    throw ApiError.invalid(
      `unknown worker(s): ${missing.join(', ')}`,
      missing.map((w) => ({ path: 'workers', message: `no worker ${w}` })),
    );
  }
}

function deploymentsOf(record: JobRecord) {
  return Object.entries(record.deployments ?? {})
    .map(([worker, d]) => ({ worker, state: d.state, version: d.version, updated_at: d.updated_at }))
    .sort((a, b) => a.worker.localeCompare(b.worker));
}

function summary(record: JobRecord) {
  return {
    name: record.name,
    version: record.version,
    state: jobState(record),
    staged_version: record.staged?.version ?? null,
    deployments: deploymentsOf(record),
    updated_at: record.updated_at,
  };
}
