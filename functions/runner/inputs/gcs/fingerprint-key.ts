/**
 * The fingerprint of an object version: bucket, name and generation. An overwritten
 * object has a new generation, hence a new key, and is read again.
 *
 * @example
 *   fingerprintKey({ bucket: 'b', name: 'logs/a.json', generation: '17' }); // 'gs://b/logs/a.json#17'
 */
import type { ObjectMeta } from './list.ts';

export function fingerprintKey(meta: Pick<ObjectMeta, 'bucket' | 'name' | 'generation'>): string {
  return `gs://${meta.bucket}/${meta.name}#${meta.generation}`;
}
