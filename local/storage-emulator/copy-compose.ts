/**
 * `objects.copy`, `objects.rewrite` (done in one call) and `objects.compose`. The destination's
 * preconditions (`ifGenerationMatch=0`: only if there is none) are checked under the store's
 * lock like an upload's; copy and rewrite also take the source's `ifSource...` ones and
 * `sourceGeneration`. A copy keeps the source's writable metadata unless the request body
 * gives other values; a composite object has a componentCount and a crc32c but no md5Hash
 * (cloud.google.com/storage/docs/composite-objects).
 */
import { HttpError } from './http-error.ts';
import { checkPreconditions, preconditionsOf } from './preconditions.ts';
import { metaOf, metaPatchOf } from './request-body.ts';
import { requireName } from './routes.ts';
import type { ObjectMeta, ObjectStore, WritableMeta } from './store.ts';

const MAX_COMPONENTS = 32;

export async function copyObject(
  store: ObjectStore,
  source: { bucket: string; object: string },
  target: { bucket: string; object: string },
  q: URLSearchParams,
  body: Record<string, unknown>,
): Promise<ObjectMeta> {
  const from = await store.getObject(source.bucket, source.object);
  const sourceGeneration = q.get('sourceGeneration');
  if (!from || (sourceGeneration !== null && sourceGeneration !== String(from.generation)))
    throw new HttpError(404, `No such object: ${source.bucket}/${source.object}`, 'notFound');
  checkPreconditions(preconditionsOf(q, true), from, 'write');
  const destination = preconditionsOf(q);
  if (!store.getBucket(target.bucket))
    throw new HttpError(404, 'The destination bucket does not exist.', 'notFound');
  const overrides = metaOf(metaPatchOf(body));
  const data = await store.readAll(from);
  return await store.putObject(
    target.bucket,
    target.object,
    data,
    { ...writableOf(from), ...overrides },
    { check: (previous) => checkPreconditions(destination, previous, 'write') },
  );
}

export async function composeObject(
  store: ObjectStore,
  target: { bucket: string; object: string },
  q: URLSearchParams,
  request: Record<string, unknown>,
): Promise<ObjectMeta> {
  const destination = preconditionsOf(q);
  const sources = request.sourceObjects;
  if (!Array.isArray(sources) || sources.length === 0 || sources.length > MAX_COMPONENTS)
    throw new HttpError(400, `compose needs between 1 and ${MAX_COMPONENTS} source objects`, 'invalid');
  const destinationBody = request.destination ?? {};
  if (typeof destinationBody !== 'object' || destinationBody === null || Array.isArray(destinationBody))
    throw new HttpError(400, 'Invalid value for destination', 'invalid');
  const meta = metaOf(metaPatchOf(destinationBody as Record<string, unknown>));
  const parts: Buffer[] = [];
  let componentCount = 0;
  for (const entry of sources as unknown[]) {
    const { name, generation, objectPreconditions } = (entry ?? {}) as {
      name?: unknown;
      generation?: unknown;
      objectPreconditions?: { ifGenerationMatch?: unknown };
    };
    if (typeof name !== 'string') throw new HttpError(400, 'every source object needs a name', 'invalid');
    requireName(name);
    const source = await store.getObject(target.bucket, name);
    if (!source || (generation !== undefined && String(generation) !== String(source.generation)))
      throw new HttpError(404, `No such object: ${target.bucket}/${name}`, 'notFound');
    const wanted = objectPreconditions?.ifGenerationMatch;
    if (wanted !== undefined && String(wanted) !== String(source.generation))
      throw new HttpError(
        412,
        'At least one of the pre-conditions you specified did not hold.',
        'conditionNotMet',
      );
    parts.push(await store.readAll(source));
    componentCount += source.componentCount ?? 1;
  }
  return await store.putObject(
    target.bucket,
    target.object,
    Buffer.concat(parts),
    { contentType: 'application/octet-stream', ...meta },
    { componentCount, check: (previous) => checkPreconditions(destination, previous, 'write') },
  );
}

function writableOf(object: ObjectMeta): WritableMeta {
  const out: WritableMeta = { contentType: object.contentType };
  for (const key of [
    'contentEncoding',
    'cacheControl',
    'contentDisposition',
    'contentLanguage',
    'customTime',
  ] as const) {
    if (object[key] !== undefined) out[key] = object[key];
  }
  if (object.metadata) out.metadata = { ...object.metadata };
  return out;
}
