/**
 * Request bodies: read with a size cap (bodies are held in memory), parsed as JSON objects,
 * and the writable object fields in them checked, so that a bad body is GCS's 400
 * (`parseError` for text that is not JSON, `invalid` for a field of the wrong type) and
 * changes nothing, instead of a 500 or stored garbage.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.ts';
import type { MetaPatch, WritableMeta } from './store.ts';

/** JSON bodies (resources, patches, compose requests): GCS's own are a few KiB at most. */
export const MAX_JSON_BYTES = 1024 * 1024;

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function tooLarge(limit: number): HttpError {
  return new HttpError(
    413,
    `The request is larger than the emulator's limit of ${limit} bytes.`,
    'uploadTooLarge',
  );
}

/** A JSON object (an empty body is `{}`); text that is not JSON, or JSON that is not an object, is a 400. */
export function parseJsonObject(body: Buffer | string): Record<string, unknown> {
  const text = body.toString();
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'Parse Error: the request body is not valid JSON.', 'parseError');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'Invalid JSON payload: the request body must be a JSON object.', 'invalid');
  return value as Record<string, unknown>;
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBody(req, MAX_JSON_BYTES));
}

/** The writable object fields that are strings; `metadata` is the other. */
const STRING_FIELDS = [
  'contentType',
  'contentEncoding',
  'cacheControl',
  'contentDisposition',
  'contentLanguage',
  'customTime',
] as const;

/**
 * The writable fields of a resource in a request, checked. A null is kept (in a patch it
 * deletes the field or metadata key); `metaOf` drops them for a new object. Read-only and
 * unknown fields are ignored, as GCS ignores them.
 */
export function metaPatchOf(body: Record<string, unknown>): MetaPatch {
  const patch: MetaPatch = {};
  for (const key of STRING_FIELDS) {
    const value = body[key];
    if (value === undefined) continue;
    if (value !== null && typeof value !== 'string') throw invalidField(key, value);
    if (key === 'customTime' && typeof value === 'string' && Number.isNaN(Date.parse(value)))
      throw invalidField(key, value);
    patch[key] = value;
  }
  if (body.metadata !== undefined) {
    const metadata = body.metadata;
    if (metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata)))
      throw invalidField('metadata', metadata);
    if (metadata === null) patch.metadata = null;
    else {
      const entries: Record<string, string | null> = {};
      for (const [key, value] of Object.entries(metadata as Record<string, unknown>)) {
        // Numbers and booleans are what a JSON client may send for a string map; GCS keeps them as text.
        if (value === null || typeof value === 'string') entries[key] = value;
        else if (typeof value === 'number' || typeof value === 'boolean') entries[key] = String(value);
        else throw invalidField(`metadata.${key}`, value);
      }
      patch.metadata = entries;
    }
  }
  return patch;
}

/** The metadata of a new object (upload, copy override, compose destination): nulls mean "not set". */
export function metaOf(patch: MetaPatch): Partial<WritableMeta> {
  const out: Partial<WritableMeta> = {};
  for (const key of STRING_FIELDS) {
    const value = patch[key];
    if (typeof value === 'string') out[key] = value;
  }
  if (patch.metadata) {
    const entries = Object.entries(patch.metadata).filter((e): e is [string, string] => e[1] !== null);
    if (entries.length) out.metadata = Object.fromEntries(entries);
  }
  return out;
}

function invalidField(field: string, value: unknown): HttpError {
  return new HttpError(400, `Invalid value for ${field}: ${JSON.stringify(value)}`, 'invalid');
}
