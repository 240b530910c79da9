/**
 * Shapes events: the data (a JSON object's fields merged into the event, or the value in
 * `data-field`, or in `_raw` when it cannot be merged) plus the metadata `*-field`s the
 * job names. Metadata is written last, so a field the job asked for is never hidden by a
 * same-named field in the data. Parsed objects are used as the event itself, not copied:
 * this is the hot path of every line.
 *
 * @example
 *   const shape = eventShaper(plan, meta);
 *   shape.fromValue({ level: 'info' }); // { level: 'info', object: 'logs/a.json' }
 */
import { type RunEvent, withEventJson } from '../../types.ts';
import type { GcsPlan } from './config.ts';
import type { ObjectMeta } from './list.ts';

export const RAW_FIELD = '_raw';

export interface EventShaper {
  /** A parsed JSON value (objects merge unless `data-field` is set). */
  fromValue(value: unknown): RunEvent;
  /**
   * A JSON object parsed from `text`: the same event as `fromValue`, which also keeps its
   * JSON text (the line with the metadata fields spliced in) for outputs to write as is.
   */
  fromJsonObject(value: RunEvent, text: string): RunEvent;
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

export function eventShaper(plan: Pick<GcsPlan, 'fields' | 'dataField'>, meta: ObjectMeta): EventShaper {
  const entries = metadataEntries(plan.fields, meta);
  const dataField = plan.dataField;
  const withMeta = (event: RunEvent): RunEvent => {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      event[entry[0]] = entry[1];
    }
    return event;
  };
  // `,"object":"logs/a.json"`: what the metadata adds to an object's JSON text.
  const suffix = entries.map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v ?? null)}`).join('');
  const names = entries.map(([k]) => JSON.stringify(k));
  const fromValue = (value: unknown): RunEvent => {
    if (dataField) return withMeta({ [dataField]: value });
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return withMeta(value as RunEvent);
    return withMeta({ [RAW_FIELD]: value });
  };
  return {
    fromValue,
    fromJsonObject(value, text) {
      const event = fromValue(value);
      if (dataField) return event;
      // A data field named like a metadata field would appear twice in the text: let the
      // output serialize that (rare) event itself.
      for (let i = 0; i < names.length; i++) if (text.includes(names[i]!)) return event;
      if (!suffix) return withEventJson(event, text);
      const close = text.lastIndexOf('}');
      const empty = text.slice(0, close).trimEnd().endsWith('{');
      return withEventJson(event, `${text.slice(0, close)}${empty ? suffix.slice(1) : suffix}}`);
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
