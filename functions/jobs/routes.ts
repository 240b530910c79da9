/**
 * The `jobs` family (CONTRACT section 4): save a job from YAML (kept as written) or
 * JSON, list and read it, stage it, deploy it to workers all-or-nothing, undeploy it,
 * render it for a worker, delete it (409 while deployed). The lifecycle itself is in
 * deployments.ts; handlers here validate, call it and answer.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  DeploymentView as DeploymentViewSchema,
  type DeploymentView as DeploymentViewType,
  JobSummary as JobSummarySchema,
  JobView as JobViewSchema,
  SavedJob as SavedJobSchema,
} from '../../shared/api/jobs.ts';
import { PageQuery } from '../../shared/api/page-query.ts';
import { WorkerId } from '../../shared/auth/name-schemas.ts';
import { allows } from '../../shared/auth/roles.ts';
import { ApiError } from '../../shared/errors.ts';
import { outputKindOf } from '../../shared/events/output-metrics.ts';
import { deploymentForViewer } from '../../shared/events/visibility.ts';
import { parseJobYaml } from '../../shared/job/parse.ts';
import { JobName } from '../../shared/job/schema.ts';
import { validateJob } from '../../shared/job/validate.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { mediaTypeOf } from '../app/middleware/body-rules.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import {
  deployJob,
  type JobListing,
  listJobs,
  loadJob,
  previewRendering,
  removeJob,
  saveJob,
  stageJob,
  undeployJob,
} from './deployments.ts';
import { definitionOf, type JobRecord, jobState, jobsCollection } from './store.ts';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
const NameParam = z.object({
  name: JobName,
});
const WorkerList = z.array(WorkerId).max(1000);
const DeploymentView = DeploymentViewSchema.openapi('Deployment');
const JobSummary = JobSummarySchema.openapi('JobSummary');
const JobView = JobViewSchema.openapi('Job');
const Saved = SavedJobSchema.openapi('SavedJob');

export function jobsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/jobs', authenticate(deps), requireRole('viewer'));
  routes.use('/jobs/*', authenticate(deps), requireRole('viewer'));
  const operator = [requireRole('operator')];

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
      const input = await readDefinition(c);
      const { record, created } = await saveJob(deps, c.get('principal'), name, input);
      const answer = {
        name,
        version: record.version,
        updated_at: record.updated_at,
        definition: input.definition,
      };
      return c.json(answer, created ? 201 : 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/jobs',
      tags: ['jobs'],
      summary: 'Jobs with their state, staged version and deployments, by name, a page at a time',
      security: BEARER,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(JobSummary), 'Jobs'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const tenant = c.get('principal').tenant;
      const page = await listJobs(deps, tenant, pageRequest(c.req.valid('query')));
      setNextPage(c, page.next);
      const kinds = await outputKinds(deps, tenant, page.items);
      const whole = allows(c.get('principal').roles, 'operator');
      return c.json(
        page.items.map((job, i) => summary(job, kinds[i] ?? null, whole)),
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
      const record = await loadJob(deps, c.get('principal').tenant, c.req.valid('param').name);
      if (YAML_TYPES.some((t) => (c.req.header('accept') ?? '').includes(t))) {
        return c.body(record.source_yaml ?? JSON.stringify(definitionOf(record), null, 2), 200, {
          'content-type': 'application/yaml; charset=utf-8',
        });
      }
      const definition = definitionOf(record);
      const whole = allows(c.get('principal').roles, 'operator');
      return c.json({ ...summary(record, outputKindOf(definition) ?? null, whole), definition }, 200);
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
      await removeJob(deps, c.get('principal').tenant, c.req.valid('param').name);
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
      const record = await stageJob(deps, c.get('principal'), c.req.valid('param').name);
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
      const record = await deployJob(deps, c.get('principal'), name, c.req.valid('json').workers);
      return c.json({ name, version: record.staged!.version, deployments: deploymentsOf(record) }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{name}/undeploy',
      tags: ['jobs'],
      summary:
        'Remove the job from some workers, or from all when `workers` is absent; naming a worker that does not exist is a 404 and changes nothing',
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
      const record = await undeployJob(deps, c.get('principal').tenant, name, requested);
      return c.json({ name, deployments: deploymentsOf(record) }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{name}/render',
      tags: ['jobs'],
      summary:
        'The definition a worker would run, with the scope of every context key (404 for a worker that does not exist)',
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
      const { definition, sources } = await previewRendering(deps, c.get('principal').tenant, name, worker);
      return c.json({ definition: definition as Record<string, unknown>, sources }, 200);
    },
  );

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
  const type = mediaTypeOf(c.req.header('content-type'));
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

/**
 * A job's deployments as answered: `error` only on a failed one (a stored reason outlives
 * the state it came with until the next change, and a worker may send one beside any state).
 */
function deploymentsOf(record: Pick<JobRecord, 'deployments'>): DeploymentViewType[] {
  return Object.entries(record.deployments ?? {})
    .map(([worker, d]) => ({
      worker,
      state: d.state,
      version: d.version,
      updated_at: d.updated_at,
      ...(d.state === 'failed' && d.error ? { error: d.error } : {}),
    }))
    .sort((a, b) => a.worker.localeCompare(b.worker));
}

/** `whole`: for an operator; a viewer's deployments have their `error` withheld (visibility.ts). */
function summary(record: JobListing, outputKind: string | null, whole: boolean) {
  const deployments = deploymentsOf(record);
  return {
    name: record.name,
    version: record.version,
    state: jobState(record),
    staged_version: record.staged?.version ?? null,
    deployments: whole ? deployments : deployments.map(deploymentForViewer),
    updated_at: record.updated_at,
    output_kind: outputKind,
  };
}

/**
 * The output kind of each listed job, in order: kept on the job when it is saved. A job saved
 * before that has none kept; for those only, `definition_json` is read in one batched read
 * (a job deleted since it was listed has none: null).
 */
async function outputKinds(deps: AppDeps, tenant: string, jobs: JobListing[]): Promise<(string | null)[]> {
  const older = jobs.filter((j) => j.output_kind === undefined);
  const byName = new Map<string, string | undefined>();
  if (older.length) {
    const collection = jobsCollection(await deps.clients.firestore(), tenant);
    const snaps = await collection.firestore.getAll(...older.map((j) => collection.doc(j.name)), {
      fieldMask: ['definition_json'],
    });
    for (const snap of snaps) byName.set(snap.id, snap.get('definition_json') as string | undefined);
  }
  return jobs.map((j) => {
    if (j.output_kind !== undefined) return j.output_kind;
    const text = byName.get(j.name);
    return text === undefined ? null : (outputKindOf(JSON.parse(text)) ?? null);
  });
}
