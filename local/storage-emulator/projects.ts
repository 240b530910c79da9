/**
 * Projects as the storage emulator shows them: Cloud Storage names a bucket's project by
 * number (`projectNumber`) and publishes notifications as that project's service agent
 * (`projects.serviceAccount.get`, what `gcloud storage buckets notifications create` and
 * `sluice gcs notify` ask before granting it a topic). The emulator has no project
 * registry, so a project ID gets a stable made-up number: the same ID, the same number.
 *
 * @example
 *   projectNumberOf('demo-sluice'); // '4385…', twelve digits, always the same
 *   serviceAgentOf('123'); // 'service-123@gs-project-accounts.iam.gserviceaccount.com'
 */
import { createHash } from 'node:crypto';

/** A project number as given, or the one the emulator makes up for an ID. */
export function projectNumberOf(project: string): string {
  if (/^\d+$/.test(project)) return project;
  const hash = createHash('sha256').update(project).digest();
  return String(100_000_000_000n + (hash.readBigUInt64BE(0) % 900_000_000_000n));
}

export function serviceAgentOf(projectNumber: string): string {
  return `service-${projectNumber}@gs-project-accounts.iam.gserviceaccount.com`;
}
