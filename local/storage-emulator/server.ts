/**
 * The HTTP face of the storage emulator: the GCS JSON API paths that
 * `@google-cloud/storage` calls (both `/storage/v1/...` and the bare `/b/...` form the
 * client uses under `STORAGE_EMULATOR_HOST`), uploads under `/upload/storage/v1`,
 * downloads with `alt=media`, and `/_emulator/*` for fault injection and counters.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { FaultInjector, RequestKind } from './faults.ts';
import { listNames } from './list.ts';
import { bucketNameProblem, objectNameProblem, UnsafeNameError } from './names.ts';
import { NotificationError, Notifications, type ObjectChange } from './notifications.ts';
import { applyFields, parseFields } from './partial-response.ts';
import { projectNumberOf, serviceAgentOf } from './projects.ts';
import { bucketResource, errorBody, etagOf, objectResource } from './resources.ts';
import type { ObjectMeta, ObjectStore, WritableMeta } from './store.ts';

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface UploadSession {
  bucket: string;
  name: string;
  meta: WritableMeta;
  preconditions: URLSearchParams;
  chunks: Buffer[];
  received: number;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]$/;

export function createHandler(
  store: ObjectStore,
  faults: FaultInjector,
  baseUrl: () => string,
  notifications: Notifications = new Notifications(),
) {
  const sessions = new Map<string, UploadSession>();
  store.onChange = (change) =>
    void notifications.changed({
      type: change.type,
      bucket: change.object.bucket,
      object: objectResource(baseUrl(), change.object) as ObjectChange['object'],
      ...(change.overwrote ? { overwroteGeneration: String(change.overwrote) } : {}),
      ...(change.overwrittenBy ? { overwrittenByGeneration: String(change.overwrittenBy) } : {}),
    });

  /** `/b/{bucket}/notificationConfigs[/{id}]`: create, list, get, delete. */
  async function notificationConfigs(
    req: IncomingMessage,
    res: ServerResponse,
    route: { bucket: string; id?: string },
    base: string,
  ): Promise<void> {
    if (!store.getBucket(route.bucket)) throw new HttpError(404, 'The specified bucket does not exist.');
    if (!route.id && req.method === 'POST')
      return sendJson(
        res,
        200,
        await notifications.create(
          route.bucket,
          store.getBucket(route.bucket)!.projectNumber ?? '0',
          await readJson(req),
          base,
          faults.grantDelayMs,
        ),
      );
    if (!route.id && req.method === 'GET') return sendJson(res, 200, notifications.list(route.bucket, base));
    if (route.id && req.method === 'GET')
      return sendJson(res, 200, notifications.get(route.bucket, route.id, base));
    if (route.id && req.method === 'DELETE') {
      notifications.delete(route.bucket, route.id);
      return sendEmpty(res, 204);
    }
    throw new HttpError(400, `unsupported request ${req.method} notificationConfigs`);
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://emulator');
      if (url.pathname.startsWith('/_emulator/')) return await admin(req, res, url);
      // The path as sent: URL parsing would resolve `..` and `%2E%2E` segments, and the
      // resolved path could name another bucket or a route the client never asked for.
      const route = parseRoute((req.url ?? '/').split('?')[0]!);
      checkRouteNames(route);
      const injected = await faults.admit(kindOf(req.method!, route, url));
      if (injected) {
        await drain(req);
        return sendJson(res, injected, errorBody(injected, 'injected fault'));
      }
      await serve(req, res, url, route);
    } catch (err) {
      if (res.headersSent) {
        res.destroy(err as Error);
        return;
      }
      const status =
        err instanceof HttpError || err instanceof NotificationError
          ? err.status
          : err instanceof UnsafeNameError
            ? 400
            : 500;
      sendJson(res, status, errorBody(status, (err as Error).message));
    }
  };

  async function serve(req: IncomingMessage, res: ServerResponse, url: URL, route: Route): Promise<void> {
    const q = url.searchParams;
    const method = req.method!;
    const base = baseUrl();
    const fields = selectedFields(q);
    if (route.kind === 'upload') {
      if (!(await store.bucket(route.bucket)))
        throw new HttpError(404, `The specified bucket does not exist.`);
      if (method === 'POST') return await startUpload(req, res, route.bucket, q);
      if (method === 'PUT' && q.get('upload_id')) return await continueUpload(req, res, q.get('upload_id')!);
      throw new HttpError(400, `unsupported upload request ${method}`);
    }
    if (route.kind === 'buckets') {
      if (method === 'GET') {
        return sendJson(res, 200, {
          kind: 'storage#buckets',
          items: store.listBuckets().map((b) => bucketResource(base, b)),
        });
      }
      if (method === 'POST') {
        const body = (await readJson(req)) as { name?: string };
        if (!body.name || !BUCKET_NAME.test(body.name))
          throw new HttpError(400, `Invalid bucket name: '${body.name ?? ''}'`);
        const project = url.searchParams.get('project');
        const created = await store.createBucket(body.name, project ? projectNumberOf(project) : undefined);
        if (!created)
          throw new HttpError(
            409,
            'Your previous request to create the named bucket succeeded and you already own it.',
          );
        return sendJson(res, 200, bucketResource(base, created));
      }
    }
    if (route.kind === 'bucket') {
      const bucket = store.getBucket(route.bucket);
      if (!bucket) throw new HttpError(404, 'The specified bucket does not exist.');
      if (method === 'GET') return sendJson(res, 200, bucketResource(base, bucket));
      if (method === 'DELETE') {
        if (!(await store.deleteBucket(route.bucket)))
          throw new HttpError(409, 'The bucket you tried to delete is not empty.');
        notifications.forgetBucket(route.bucket);
        return sendEmpty(res, 204);
      }
    }
    if (route.kind === 'objects' && method === 'GET') return await list(res, route.bucket, q, base, fields);
    if (route.kind === 'layout' && method === 'GET') {
      // gcloud asks before a move whether the bucket has a hierarchical namespace (it has not).
      if (!store.getBucket(route.bucket)) throw new HttpError(404, 'The specified bucket does not exist.');
      return sendJson(res, 200, {
        kind: 'storage#storageLayout',
        bucket: route.bucket,
        location: 'US',
        locationType: 'multi-region',
        hierarchicalNamespace: { enabled: false },
      });
    }
    if (route.kind === 'compose' && method === 'POST') return await compose(req, res, route, base);
    if (route.kind === 'notifications') return await notificationConfigs(req, res, route, base);
    if (route.kind === 'service-account' && method === 'GET')
      return sendJson(res, 200, {
        kind: 'storage#serviceAccount',
        email_address: serviceAgentOf(projectNumberOf(route.project)),
      });
    if (route.kind === 'object' || route.kind === 'download') {
      const bucket = await store.bucket(route.bucket);
      if (!bucket) throw new HttpError(404, 'The specified bucket does not exist.');
      if (route.kind === 'object' && method === 'POST' && route.action)
        return await copy(req, res, route, base);
      const object = bucket.objects.get(route.object);
      if (!object || (q.get('generation') && q.get('generation') !== String(object.generation))) {
        throw new HttpError(404, `No such object: ${route.bucket}/${route.object}`);
      }
      checkPreconditions(q, object);
      if (method === 'GET' || method === 'HEAD') {
        if (route.kind === 'download' || q.get('alt') === 'media') return await download(req, res, object);
        return sendJson(res, 200, fields(objectResource(base, object)));
      }
      if (method === 'PATCH' || method === 'PUT') {
        const patch = (await readJson(req)) as Partial<WritableMeta>;
        return sendJson(
          res,
          200,
          objectResource(base, (await store.patchObject(route.bucket, route.object, pickMeta(patch)))!),
        );
      }
      if (method === 'DELETE') {
        await store.deleteObject(route.bucket, route.object);
        return sendEmpty(res, 204);
      }
    }
    throw new HttpError(400, `unsupported request ${method} ${url.pathname}`);
  }

  async function list(
    res: ServerResponse,
    bucketName: string,
    q: URLSearchParams,
    base: string,
    fields: (body: Record<string, unknown>) => unknown,
  ): Promise<void> {
    const bucket = await store.bucket(bucketName);
    if (!bucket) throw new HttpError(404, 'The specified bucket does not exist.');
    const maxResults = q.get('maxResults');
    const page = listNames(bucket.names, {
      ...optional('prefix', q.get('prefix')),
      ...optional('delimiter', q.get('delimiter')),
      ...optional('startOffset', q.get('startOffset')),
      ...optional('endOffset', q.get('endOffset')),
      ...optional('matchGlob', q.get('matchGlob')),
      ...optional('pageToken', q.get('pageToken')),
      ...(maxResults ? { maxResults: Number(maxResults) } : {}),
    });
    sendJson(
      res,
      200,
      fields({
        kind: 'storage#objects',
        ...(page.prefixes.length ? { prefixes: page.prefixes } : {}),
        items: page.names.map((name) => objectResource(base, bucket.objects.get(name)!)),
        ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      }),
    );
    for (const name of faults.vanishing(page.names)) await store.deleteObject(bucketName, name);
  }

  async function download(req: IncomingMessage, res: ServerResponse, object: ObjectMeta): Promise<void> {
    const storedGzip = object.contentEncoding === 'gzip';
    const acceptsGzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const headers: Record<string, string> = {
      'content-type': object.contentType,
      'x-goog-generation': String(object.generation),
      'x-goog-metageneration': String(object.metageneration),
      'x-goog-stored-content-encoding': storedGzip ? 'gzip' : 'identity',
      'x-goog-stored-content-length': String(object.size),
      'x-goog-hash': `crc32c=${object.crc32c},md5=${object.md5Hash}`,
      etag: etagOf(object),
      'last-modified': new Date(object.updated).toUTCString(),
      'accept-ranges': 'bytes',
    };
    const range = parseRange(req.headers.range, object.size);
    if (storedGzip && !acceptsGzip) {
      // Decompressive transcoding, as GCS does for clients that don't accept gzip.
      delete headers['x-goog-hash'];
      res.writeHead(200, headers);
      if (req.method === 'HEAD') return void res.end();
      await pipeline(store.read(object, 0, object.size - 1), createGunzip(), res);
      return;
    }
    if (storedGzip) headers['content-encoding'] = 'gzip';
    let [start, end] = [0, object.size - 1];
    let status = 200;
    if (range === 'invalid') {
      res.writeHead(416, { 'content-range': `bytes */${object.size}` });
      return void res.end();
    }
    if (range) {
      [start, end] = range;
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${object.size}`;
    }
    headers['content-length'] = String(Math.max(0, end - start + 1));
    res.writeHead(status, headers);
    if (req.method === 'HEAD' || object.size === 0) return void res.end();
    faults.stats.bytesServed += end - start + 1;
    await pipeline(store.read(object, start, end), res);
  }

  async function startUpload(
    req: IncomingMessage,
    res: ServerResponse,
    bucket: string,
    q: URLSearchParams,
  ): Promise<void> {
    const type = q.get('uploadType') ?? 'media';
    const body = await readBody(req);
    if (type === 'media') {
      const name = requireName(q.get('name'));
      const meta = {
        contentType: String(req.headers['content-type'] ?? 'application/octet-stream'),
        ...optional('contentEncoding', q.get('contentEncoding')),
      };
      return await finishUpload(res, bucket, name, body, meta, q);
    }
    if (type === 'multipart') {
      const { metadata, data } = parseMultipart(String(req.headers['content-type'] ?? ''), body);
      const name = requireName((metadata.name as string | undefined) ?? q.get('name'));
      return await finishUpload(
        res,
        bucket,
        name,
        data,
        metaFrom(metadata, data.length ? undefined : 'application/octet-stream'),
        q,
      );
    }
    if (type === 'resumable') {
      const metadata = body.length ? (JSON.parse(body.toString()) as Record<string, unknown>) : {};
      const name = requireName((metadata.name as string | undefined) ?? q.get('name'));
      const id = randomUUID();
      const declaredType = req.headers['x-upload-content-type'];
      sessions.set(id, {
        bucket,
        name,
        meta: metaFrom(metadata, typeof declaredType === 'string' ? declaredType : undefined),
        preconditions: q,
        chunks: [],
        received: 0,
      });
      const location = `${baseUrl()}/upload/storage/v1/b/${bucket}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${id}`;
      res.writeHead(200, { location, 'x-guploader-uploadid': id, 'content-length': '0' });
      return void res.end();
    }
    throw new HttpError(400, `unsupported uploadType ${type}`);
  }

  async function continueUpload(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const session = sessions.get(id);
    if (!session) throw new HttpError(404, 'No such upload session (it may have completed or expired).');
    const body = await readBody(req);
    const rangeHeader = String(req.headers['content-range'] ?? '');
    const match = /^bytes (?:(\d+)-(\d+|\*)|\*)\/(\d+|\*)$/.exec(rangeHeader);
    let total: number | undefined;
    if (!rangeHeader) total = session.received + body.length;
    else if (!match) throw new HttpError(400, `invalid Content-Range: ${rangeHeader}`);
    else {
      total = match[3] === '*' ? undefined : Number(match[3]);
      // `bytes N-*/*`: the client streams the rest of the object in this one request.
      if (match[2] === '*' && total === undefined) total = Number(match[1]) + body.length;
      if (match[1] !== undefined) {
        const first = Number(match[1]);
        if (first > session.received)
          throw new HttpError(400, `chunk starts at ${first}, expected ${session.received}`);
        const fresh = body.subarray(session.received - first);
        session.chunks.push(fresh);
        session.received += fresh.length;
      }
    }
    if (total !== undefined && session.received >= total) {
      sessions.delete(id);
      const data = Buffer.concat(session.chunks);
      return await finishUpload(res, session.bucket, session.name, data, session.meta, session.preconditions);
    }
    const headers: Record<string, string> = { 'content-length': '0' };
    if (session.received > 0) headers.range = `bytes=0-${session.received - 1}`;
    res.writeHead(308, headers);
    res.end();
  }

  async function finishUpload(
    res: ServerResponse,
    bucket: string,
    name: string,
    data: Buffer,
    meta: WritableMeta,
    q: URLSearchParams,
  ): Promise<void> {
    checkPreconditions(q, await store.getObject(bucket, name));
    const object = await store.putObject(bucket, name, data, meta);
    sendJson(res, 200, objectResource(baseUrl(), object));
  }

  async function copy(
    req: IncomingMessage,
    res: ServerResponse,
    route: ObjectRoute,
    base: string,
  ): Promise<void> {
    const source = await store.getObject(route.bucket, route.object);
    if (!source) throw new HttpError(404, `No such object: ${route.bucket}/${route.object}`);
    const target = route.action!;
    if (!store.getBucket(target.bucket)) throw new HttpError(404, 'The destination bucket does not exist.');
    const overrides = (await readJson(req)) as Partial<WritableMeta>;
    const data = await store.readAll(source);
    const object = await store.putObject(target.bucket, target.object, data, {
      contentType: source.contentType,
      ...(source.contentEncoding ? { contentEncoding: source.contentEncoding } : {}),
      ...(source.metadata ? { metadata: source.metadata } : {}),
      ...pickMeta(overrides),
    });
    const resource = objectResource(base, object);
    if (target.verb === 'rewriteTo') {
      return sendJson(res, 200, {
        kind: 'storage#rewriteResponse',
        totalBytesRewritten: String(object.size),
        objectSize: String(object.size),
        done: true,
        resource,
      });
    }
    sendJson(res, 200, resource);
  }

  /** `objects.compose`: the destination is the sources' bytes, in order (at most 32, as GCS allows). */
  async function compose(
    req: IncomingMessage,
    res: ServerResponse,
    route: { bucket: string; object: string },
    base: string,
  ): Promise<void> {
    const request = (await readJson(req)) as {
      sourceObjects?: { name?: string }[];
      destination?: Partial<WritableMeta>;
    };
    const sources = request.sourceObjects ?? [];
    if (sources.length === 0 || sources.length > 32)
      throw new HttpError(400, 'compose needs between 1 and 32 source objects');
    const parts: Buffer[] = [];
    for (const { name } of sources) {
      if (typeof name !== 'string') throw new HttpError(400, 'every source object needs a name');
      requireName(name);
      const source = await store.getObject(route.bucket, name);
      if (!source) throw new HttpError(404, `No such object: ${route.bucket}/${name}`);
      parts.push(await store.readAll(source));
    }
    const object = await store.putObject(route.bucket, route.object, Buffer.concat(parts), {
      contentType: 'application/octet-stream',
      ...pickMeta(request.destination ?? {}),
    });
    sendJson(res, 200, objectResource(base, object));
  }

  async function admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (url.pathname === '/_emulator/faults' && req.method === 'POST') {
      faults.configure(await readJson(req));
      return sendEmpty(res, 204);
    }
    if (url.pathname === '/_emulator/stats' && req.method === 'GET') return sendJson(res, 200, faults.stats);
    if (url.pathname === '/_emulator/stats/reset' && req.method === 'POST') {
      faults.resetStats();
      return sendEmpty(res, 204);
    }
    throw new HttpError(404, `unknown emulator admin route ${url.pathname}`);
  }
}

type ObjectRoute = {
  kind: 'object' | 'download';
  bucket: string;
  object: string;
  action?: { verb: 'rewriteTo' | 'copyTo'; bucket: string; object: string };
};
type Route =
  | { kind: 'buckets' }
  | { kind: 'bucket'; bucket: string }
  | { kind: 'objects'; bucket: string }
  | { kind: 'upload'; bucket: string }
  | { kind: 'layout'; bucket: string }
  | { kind: 'compose'; bucket: string; object: string }
  | { kind: 'notifications'; bucket: string; id?: string }
  | { kind: 'service-account'; project: string }
  | ObjectRoute
  | { kind: 'unknown' };

function parseRoute(pathname: string): Route {
  const raw = pathname.split('/').slice(1);
  let parts = raw;
  let kind: 'api' | 'upload' | 'download' = 'api';
  if (raw[0] === 'upload' && raw[1] === 'storage') [kind, parts] = ['upload', raw.slice(3)];
  // gcloud sends resumable uploads to /resumable/upload/storage/v1/...
  else if (raw[0] === 'resumable' && raw[1] === 'upload' && raw[2] === 'storage')
    [kind, parts] = ['upload', raw.slice(4)];
  else if (raw[0] === 'download' && raw[1] === 'storage') [kind, parts] = ['download', raw.slice(3)];
  else if (raw[0] === 'storage' && raw[1] === 'v1') parts = raw.slice(2);
  let seg: string[];
  try {
    seg = parts.map((p) => decodeURIComponent(p));
  } catch {
    throw new HttpError(400, 'The path is not valid percent-encoded UTF-8.');
  }
  // `projects.serviceAccount.get`: who publishes a bucket's notifications. Also without
  // `/storage/v1`: the Node client drops it when STORAGE_EMULATOR_HOST is set.
  if (kind === 'api' && seg[0] === 'projects' && seg[2] === 'serviceAccount' && seg.length === 3)
    return { kind: 'service-account', project: seg[1]! };
  if (seg[0] !== 'b') {
    // XML-API style `/<bucket>/<object...>` (public URLs, some client download paths).
    if (raw.length >= 2 && raw[0])
      return { kind: 'download', bucket: seg[0]!, object: seg.slice(1).join('/') };
    return { kind: 'unknown' };
  }
  if (seg.length === 1 || (seg.length === 2 && seg[1] === '')) return { kind: 'buckets' };
  const bucket = seg[1]!;
  if (kind === 'upload') return { kind: 'upload', bucket };
  if (seg.length === 2) return { kind: 'bucket', bucket };
  if (seg.length === 3 && seg[2] === 'storageLayout') return { kind: 'layout', bucket };
  if (seg[2] === 'notificationConfigs' && seg.length <= 4)
    return seg[3] ? { kind: 'notifications', bucket, id: seg[3] } : { kind: 'notifications', bucket };
  if (seg[2] === 'o' && (seg.length === 3 || seg[3] === '')) return { kind: 'objects', bucket };
  if (seg[2] === 'o') {
    const object = seg[3]!;
    if (seg[4] === 'compose' && seg.length === 5) return { kind: 'compose', bucket, object };
    if ((seg[4] === 'rewriteTo' || seg[4] === 'copyTo') && seg[5] === 'b' && seg[7] === 'o') {
      return { kind: 'object', bucket, object, action: { verb: seg[4], bucket: seg[6]!, object: seg[8]! } };
    }
    return { kind: kind === 'download' ? 'download' : 'object', bucket, object };
  }
  return { kind: 'unknown' };
}

function kindOf(method: string, route: Route, url: URL): RequestKind {
  if (route.kind === 'objects') return 'list';
  if (route.kind === 'upload') return 'upload';
  if (route.kind === 'download' || (route.kind === 'object' && url.searchParams.get('alt') === 'media'))
    return 'download';
  if (route.kind === 'object' && method === 'GET') return 'metadata';
  return 'other';
}

/** The `fields` selection of a request (partial response), or the identity. */
function selectedFields(q: URLSearchParams): (body: Record<string, unknown>) => unknown {
  const text = q.get('fields');
  if (!text) return (body) => body;
  let selection: ReturnType<typeof parseFields>;
  try {
    selection = parseFields(text);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  return (body) => applyFields(body, selection);
}

function checkPreconditions(q: URLSearchParams, object: ObjectMeta | undefined): void {
  const generation = q.get('ifGenerationMatch');
  if (generation !== null && String(object?.generation ?? 0) !== generation) {
    throw new HttpError(412, 'At least one of the pre-conditions you specified did not hold.');
  }
  const notGeneration = q.get('ifGenerationNotMatch');
  if (notGeneration !== null && String(object?.generation ?? 0) === notGeneration) {
    throw new HttpError(412, 'At least one of the pre-conditions you specified did not hold.');
  }
  const metageneration = q.get('ifMetagenerationMatch');
  if (metageneration !== null && String(object?.metageneration ?? 0) !== metageneration) {
    throw new HttpError(412, 'At least one of the pre-conditions you specified did not hold.');
  }
}

function parseRange(header: string | undefined, size: number): [number, number] | 'invalid' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return size === 0 ? undefined : 'invalid';
  return [start, end];
}

function parseMultipart(
  contentType: string,
  body: Buffer,
): { metadata: Record<string, unknown>; data: Buffer } {
  // Quoted with double quotes (the Node client), single quotes (gcloud) or not at all.
  const quoted = /boundary=(?:"([^"]+)"|'([^']+)'|([^;\s]+))/.exec(contentType);
  const boundary = quoted?.[1] ?? quoted?.[2] ?? quoted?.[3];
  if (!boundary) throw new HttpError(400, 'multipart upload without a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let index = body.indexOf(delimiter);
  while (index !== -1) {
    const next = body.indexOf(delimiter, index + delimiter.length);
    if (next === -1) break;
    parts.push(body.subarray(index + delimiter.length, next));
    index = next;
  }
  const [metaPart, dataPart] = parts.map(partBody);
  if (!metaPart || !dataPart)
    throw new HttpError(400, 'multipart upload needs a metadata part and a media part');
  const metadata = JSON.parse(metaPart.body.toString()) as Record<string, unknown>;
  if (!metadata.contentType && dataPart.contentType) metadata.contentType = dataPart.contentType;
  return { metadata, data: dataPart.body };
}

/** One part: headers, a blank line, the body. Lines end with CRLF, or with LF alone (gcloud). */
function partBody(part: Buffer): { body: Buffer; contentType?: string } {
  const crlf = part.indexOf('\r\n\r\n');
  const lf = part.indexOf('\n\n');
  const [split, gap] = lf !== -1 && (crlf === -1 || lf < crlf) ? [lf, 2] : [crlf, 4];
  const headerText = part.subarray(0, split).toString();
  let body = part.subarray(split + gap);
  if (body.subarray(-2).toString() === '\r\n') body = body.subarray(0, -2);
  else if (body.subarray(-1).toString() === '\n') body = body.subarray(0, -1);
  const contentType = /content-type:\s*([^\r\n]+)/i.exec(headerText)?.[1];
  return { body, ...(contentType ? { contentType } : {}) };
}

function metaFrom(metadata: Record<string, unknown>, fallbackType?: string): WritableMeta {
  return {
    contentType: (metadata.contentType as string | undefined) ?? fallbackType ?? 'application/octet-stream',
    ...pickMeta(metadata as Partial<WritableMeta>),
  };
}

function pickMeta(source: Partial<WritableMeta>): Partial<WritableMeta> {
  const out: Partial<WritableMeta> = {};
  for (const key of [
    'contentType',
    'contentEncoding',
    'cacheControl',
    'contentDisposition',
    'metadata',
  ] as const) {
    if (source[key] !== undefined && source[key] !== null)
      (out as Record<string, unknown>)[key] = source[key];
  }
  return out;
}

function requireName(name: unknown): string {
  if (typeof name !== 'string' || !name) throw new HttpError(400, 'Required parameter: name');
  const problem = objectNameProblem(name);
  if (problem) throw new HttpError(400, problem);
  return name;
}

/** Refuses, before anything is read or written, a route whose bucket or object name could be a path out of its folder. */
function checkRouteNames(route: Route): void {
  const buckets: string[] = [];
  const objects: string[] = [];
  if ('bucket' in route) buckets.push(route.bucket);
  if ('object' in route) objects.push(route.object);
  if ('action' in route && route.action) {
    buckets.push(route.action.bucket);
    objects.push(route.action.object);
  }
  for (const bucket of buckets) {
    const problem = bucketNameProblem(bucket);
    if (problem) throw new HttpError(400, problem);
  }
  for (const object of objects) requireName(object);
}

function optional<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: string };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON request body (an empty one is `{}`); anything else is the client's 400, not a 500. */
async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = (await readBody(req)).toString('utf8');
  try {
    return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  } catch {
    throw new HttpError(400, 'The request body is not JSON.');
  }
}

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req) {
    // Discard the body of a refused request so the connection can be reused.
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0' });
  res.end();
}
