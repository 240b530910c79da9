/**
 * Lookups by names that came from outside. Firestore's `data()` returns plain objects, so
 * `record.deployments['toString']` is `Object.prototype.toString`: truthy, and a hole in
 * every "is this worker deployed?" check. Every lookup keyed by a name from a request, a
 * token or a job reads own properties only, through these.
 *
 * @example
 *   own(record.deployments, worker)        // the deployment, or undefined
 *   hasOwn(user.memberships, tenant)       // false for 'constructor'
 */

/** `record[key]` when `key` is the record's own property, else undefined. */
export function own<V>(record: Readonly<Record<string, V>> | null | undefined, key: string): V | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** True when `key` is an own property of `record` (never an inherited one). */
export function hasOwn(record: object | null | undefined, key: string): boolean {
  return record != null && Object.hasOwn(record, key);
}
