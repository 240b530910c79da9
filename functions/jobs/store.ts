/**
 * Jobs in Firestore (`tenants/{tenant}/jobs/{name}`): the definition as saved (and the
 * YAML as written, comments included), its version, what is staged, and its deployments.
 * The staged part freezes the definition and the job's context overrides together, which
 * is why a job-context change reaches workers only after stage or redeploy.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ContextMap } from '../../shared/context/map.ts';
import { referencedSecrets } from '../../shared/job/secret-access.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import type { RenderInput } from './render-for-worker.ts';

/**
 * `pending` until the worker first reports; `running` while it runs the job (a worker's
 * triggers are armed, or a `cloud` run is under way); `idle` on `cloud` between runs;
 * `stopped` when its input ended; `failed` with the reason; `removed` as a worker
 * acknowledges an undeploy (the deployment then disappears).
 */
export const DEPLOYMENT_STATES = ['pending', 'running', 'idle', 'stopped', 'failed', 'removed'] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];

export interface Deployment {
  state: DeploymentState;
  version: number;
  updated_at: string;
  error?: string;
  /**
   * `cloud` only: when the tick should request a run of the job again (epoch ms; null: not
   * until it is staged again), kept by the job's runs (runs/cloud-states.ts) and the tick
   * (runs/dispatch.ts). Staging drops it, so a new version is looked at on the next tick.
   */
  next_due_ms?: number | null;
}

export interface StagedJob {
  version: number;
  /** The saved-level definition of that version, as JSON text. */
  definition_json: string;
  /** The job's context overrides when it was staged, as JSON text. */
  job_context_json: string;
  staged_at: string;
  /**
   * The secrets its renderings referenced when it was staged, approved by whoever staged
   * it (an admin when any); absent on jobs staged before this was recorded.
   */
  secrets?: string[];
}

export interface JobRecord {
  name: string;
  version: number;
  created_at: string;
  updated_at: string;
  /** The document as the user wrote it, when it came as YAML. */
  source_yaml?: string;
  /** The saved-level definition as JSON text (Firestore refuses arrays of arrays). */
  definition_json: string;
  /**
   * The kind of the definition's output (`print`, `gcs`, ...), kept beside it so that a page
   * of jobs shows it without reading definitions. Absent on jobs saved before it was kept.
   */
  output_kind?: string | null;
  staged?: StagedJob;
  deployments: Record<string, Deployment>;
}

export function jobsCollection(db: Firestore, tenant: string) {
  return tenantCollection(db, tenant, 'jobs');
}

export function definitionOf(record: Pick<JobRecord, 'definition_json'>): Record<string, unknown> {
  return JSON.parse(record.definition_json) as Record<string, unknown>;
}

export function stagedContext(staged: StagedJob): ContextMap {
  return JSON.parse(staged.job_context_json) as ContextMap;
}

/** `deployed` when any worker has it, else `staged` or `saved`. */
export function jobState(record: Pick<JobRecord, 'deployments' | 'staged'>): 'deployed' | 'staged' | 'saved' {
  if (Object.keys(record.deployments ?? {}).length > 0) return 'deployed';
  return record.staged ? 'staged' : 'saved';
}

/** The secrets a worker running this staged job may have revealed. */
export function approvedSecrets(staged: StagedJob): string[] {
  return staged.secrets ?? referencedSecrets(JSON.parse(staged.definition_json));
}

/** What a worker runs: the staged definition and job context, held to the secrets approved at stage. */
export function stagedRenderInput(record: JobRecord & { staged: StagedJob }): RenderInput {
  return {
    name: record.name,
    definition: JSON.parse(record.staged.definition_json) as Record<string, unknown>,
    jobContext: stagedContext(record.staged),
    approvedSecrets: approvedSecrets(record.staged),
  };
}
