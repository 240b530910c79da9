/**
 * Variables in Firestore (`tenants/{tenant}/variables/{name}`): the values `${dyn|NAME}`
 * resolves to on a worker. The routes, the worker API and the cloud worker read them here.
 */
import type { Firestore } from '@google-cloud/firestore';
import { tenantCollection } from '../adapters/firestore-paths.ts';

export function variablesCollection(db: Firestore, tenant: string) {
  return tenantCollection(db, tenant, 'variables');
}
