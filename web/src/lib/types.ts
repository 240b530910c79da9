/**
 * The API's answers the pages read (CONTRACT sections 1, 2, 4), as the routes declare them
 * (shared/api/: type-only imports, so no zod reaches the browser). No DOM here: tests import it.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type ContextMap = Record<string, JsonValue>;

export type { Identity } from '../../../shared/api/identity.ts';
export type { DeploymentView as Deployment, JobSummary } from '../../../shared/api/jobs.ts';
export type { WorkerView as Worker } from '../../../shared/api/workers.ts';
