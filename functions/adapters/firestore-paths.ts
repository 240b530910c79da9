/**
 * Every Firestore path the project uses, spelled once. Data of a tenant lives under
 * `tenants/{tenant}/...`, a job's run state under `tenants/{tenant}/jobs/{job}/...`; a few
 * collections are global (identities, keys, sessions, rate limits). Code builds its
 * references through these functions, so a collection name is a type (a typo does not
 * compile), and `npm run check:deploy` reads the lists below to check that every index,
 * TTL policy and collection-group field in terraform names a collection that exists.
 *
 * @example
 *   tenantCollection(db, 'acme', 'jobs').doc('orders')   // tenants/acme/jobs/orders
 *   jobCollection(db, 'acme', 'orders', 'fingerprints')  // tenants/acme/jobs/orders/fingerprints
 */
import type { CollectionReference, DocumentReference, Firestore } from '@google-cloud/firestore';

/** Collections at the root: who exists across tenants, and the control plane's own state. */
export const ROOT_COLLECTIONS = [
  'tenants',
  'users',
  'sessions',
  'key-index',
  'system',
  'rate-limits',
  'stream-tickets',
] as const;

/** Collections under `tenants/{tenant}`. */
export const TENANT_COLLECTIONS = [
  'jobs',
  'workers',
  'contexts',
  'events',
  'outbox',
  'secrets',
  'variables',
  'api-keys',
  'enrollment-secrets',
  'telemetry-quotas',
  'message-routes',
  'run-slots',
  'parked-runs',
] as const;

/** Collections under `tenants/{tenant}/jobs/{job}`: a job's run state. */
export const JOB_COLLECTIONS = ['fingerprints', 'watermarks', 'scheduled', 'leases', 'runs'] as const;

/** Collections under `rate-limits/{scope}`. */
export const RATE_LIMIT_COLLECTIONS = ['rate-limit-failures'] as const;

export type RootCollection = (typeof ROOT_COLLECTIONS)[number];
export type TenantCollection = (typeof TENANT_COLLECTIONS)[number];
export type JobCollection = (typeof JOB_COLLECTIONS)[number];
export type CollectionId =
  | RootCollection
  | TenantCollection
  | JobCollection
  | (typeof RATE_LIMIT_COLLECTIONS)[number];

export const ALL_COLLECTIONS: readonly CollectionId[] = [
  ...ROOT_COLLECTIONS,
  ...TENANT_COLLECTIONS,
  ...JOB_COLLECTIONS,
  ...RATE_LIMIT_COLLECTIONS,
];

export function rootCollection(db: Firestore, id: RootCollection): CollectionReference {
  return db.collection(id);
}

export function tenantDoc(db: Firestore, tenant: string): DocumentReference {
  return db.collection('tenants').doc(tenant);
}

export function tenantCollection(db: Firestore, tenant: string, id: TenantCollection): CollectionReference {
  return tenantDoc(db, tenant).collection(id);
}

export function jobCollection(
  db: Firestore,
  tenant: string,
  job: string,
  id: JobCollection,
): CollectionReference {
  return tenantCollection(db, tenant, 'jobs').doc(job).collection(id);
}

/** All collections of that id across tenants (and jobs): the cloud worker's and sweeps' queries. */
export function collectionGroup(db: Firestore, id: CollectionId) {
  return db.collectionGroup(id);
}

/** The path of a job's lease document (scheduled/lease.ts takes paths). */
export function leasePath(tenant: string, job: string): string {
  return `tenants/${tenant}/jobs/${job}/leases/scheduled`;
}

/** The lease of one part of a sharded run (functions/runs/shards.ts). */
export function partLeasePath(tenant: string, job: string, part: string): string {
  return `tenants/${tenant}/jobs/${job}/leases/part-${part}`;
}
