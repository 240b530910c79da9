/**
 * The value an output reads from an event for a field it names (`time-field`, pubsub
 * `attributes` and `ordering-key`): a top-level field of that name, as the gcs input
 * writes its metadata fields (`object-name-field: meta.name`), else the dotted path into
 * maps, as actions read it (`http.status`). Own properties only.
 *
 * @example
 *   fieldValue({ meta: { ts: '2020-05-06T00:00:00Z' } }, 'meta.ts'); // '2020-05-06T00:00:00Z'
 */
import { getPath, parseFieldPath } from '../../../shared/job/actions/paths.ts';
import type { RunEvent } from '../types.ts';

export function fieldValue(event: RunEvent, field: string): unknown {
  if (Object.hasOwn(event, field)) return event[field];
  return field.includes('.') ? getPath(event, parseFieldPath(field)) : undefined;
}
