/**
 * Shapes events: the data (a JSON object's fields merged into the event, or the value in
 * `data-field`, or in `_raw` when it cannot be merged) plus the metadata `*-field`s the
 * job names. Metadata is written last, so a field the job asked for is never hidden by a
 * same-named field in the data. Parsed objects are used as the event itself, not copied:
 * this is the hot path of every line.
 *
 * @example
 *   const shape = eventShape(plan, meta);
 *   shape.fromValue({ level: 'info' }); // { level: 'info', object: 'logs/a.json' }
 */
import type { RunEvent } from '../../types.ts';
import type { GcsPlan } from './config.ts';
import type { ObjectMeta } from './list.ts';

export const RAW_FIELD = '_raw';

export type ShapePlan = Pick<GcsPlan, 'fields' | 'dataField'>;

export interface EventShape {
  /** A parsed JSON value (objects merge unless `data-field` is set). */
  fromValue(value: unknown): RunEvent;
  /** Text or base64 that is not parsed. */
  fromText(text: string): RunEvent;
}

export function metadataEntries(fields: GcsPlan['fields'], meta: ObjectMeta): [string, unknown][] {
  const entries: [string, unknown][] = [];
  if (fields.objectName) entries.push([fields.objectName, meta.name]);
  if (fields.creationTime) entries.push([fields.creationTime, meta.timeCreated ?? null]);
  if (fields.lastModified) entries.push([fields.lastModified, meta.updated ?? null]);
  if (fields.contentLength) entries.push([fields.contentLength, meta.size]);
  if (fields.contentType) entries.push([fields.contentType, meta.contentType ?? null]);
  if (fields.etag) entries.push([fields.etag, meta.etag ?? null]);
  return entries;
}

export function eventShape(plan: ShapePlan, meta: ObjectMeta): EventShape {
  const entries = metadataEntries(plan.fields, meta);
  const dataField = plan.dataField;
  const withMeta = (event: RunEvent): RunEvent => {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      event[entry[0]] = entry[1];
    }
    return event;
  };
  return {
    fromValue(value) {
      if (dataField) return withMeta({ [dataField]: value });
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        return withMeta(value as RunEvent);
      return withMeta({ [RAW_FIELD]: value });
    },
    fromText(text) {
      return withMeta({ [dataField ?? RAW_FIELD]: text });
    },
  };
}

/** The event of `mode: list-objects`: the object's metadata, plus the job's `*-field`s. */
export function listingEvent(plan: Pick<GcsPlan, 'fields'>, meta: ObjectMeta): RunEvent {
  const event: RunEvent = {
    bucket: meta.bucket,
    name: meta.name,
    generation: meta.generation,
    size: meta.size,
    content_type: meta.contentType ?? null,
    time_created: meta.timeCreated ?? null,
    updated: meta.updated ?? null,
    etag: meta.etag ?? null,
  };
  for (const [field, value] of metadataEntries(plan.fields, meta)) event[field] = value;
  return event;
}
