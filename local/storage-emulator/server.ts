/**
 * The HTTP face of the storage emulator: the GCS JSON API paths that
 * `@google-cloud/storage` calls (both `/storage/v1/...` and the bare `/b/...` form the
 * client uses under `STORAGE_EMULATOR_HOST`), uploads under `/upload/storage/v1`,
 * downloads with `alt=media`, and `/_emulator/*` for fault injection and counters.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { composeObject, copyObject } from './copy-compose.ts';
import type { FaultInjector } from './faults.ts';
import { HttpError } from './http-error.ts';
import { listNames } from './list.ts';
import { UnsafeNameError } from './names.ts';
import { NotificationError, Notifications, type ObjectChange } from './notifications.ts';
import { applyFields, parseFields } from './partial-response.ts';
import { checkPreconditions, preconditionsOf } from './preconditions.ts';
import { projectNumberOf, serviceAgentOf } from './projects.ts';
import { metaPatchOf, readJson } from './request-body.ts';
import { bucketResource, errorBody, etagOf, objectResource } from './resources.ts';
import { checkRouteNames, kindOf, parseRoute, type Route } from './routes.ts';
import type { ObjectMeta, ObjectStore } from './store.ts';
import { createUploads, DEFAULT_UPLOAD_LIMITS, type UploadLimits } from './uploads.ts';

const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]$/;

export function createHandler(
  store: ObjectStore,
  faults: FaultInjector,
  baseUrl: () => string,
  notifications: Notifications = new Notifications(),
  limits: UploadLimits = DEFAULT_UPLOAD_LIMITS,
) {
  const uploads = createUploads(store, baseUrl, limits);
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
      // A body the client did not read would be taken for its next request on this connection.
      if (!req.readableEnded) res.setHeader('connection', 'close');
      if (status === 304) return sendEmpty(res, 304);
      const reason = err instanceof HttpError ? err.reason : undefined;
      sendJson(res, status, errorBody(status, (err as Error).message, reason));
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
      const id = q.get('upload_id');
      if (method === 'POST' && !id) return await uploads.start(req, res, route.bucket, q);
      if (method === 'PUT' && id) return await uploads.resume(req, res, id);
      if (method === 'DELETE' && id) return uploads.cancel(id);
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
        const body = await readJson(req);
        if (typeof body.name !== 'string' || !BUCKET_NAME.test(body.name))
          throw new HttpError(400, `Invalid bucket name: '${String(body.name ?? '')}'`, 'invalid');
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
    if (route.kind === 'compose' && method === 'POST') {
      const request = await readJson(req);
      if (!store.getBucket(route.bucket)) throw new HttpError(404, 'The specified bucket does not exist.');
      return sendJson(res, 200, objectResource(base, await composeObject(store, route, q, request)));
    }
    if (route.kind === 'notifications') return await notificationConfigs(req, res, route, base);
    if (route.kind === 'service-account' && method === 'GET')
      return sendJson(res, 200, {
        kind: 'storage#serviceAccount',
        email_address: serviceAgentOf(projectNumberOf(route.project)),
      });
    if (route.kind === 'object' || route.kind === 'download') {
      const bucket = await store.bucket(route.bucket);
      if (!bucket) throw new HttpError(404, 'The specified bucket does not exist.');
      if (route.kind === 'object' && method === 'POST' && route.action) {
        const target = route.action;
        const object = await copyObject(store, route, target, q, await readJson(req));
        const resource = objectResource(base, object);
        if (target.verb === 'copyTo') return sendJson(res, 200, resource);
        return sendJson(res, 200, {
          kind: 'storage#rewriteResponse',
          totalBytesRewritten: String(object.size),
          objectSize: String(object.size),
          done: true,
          resource,
        });
      }
      const object = bucket.objects.get(route.object);
      const notFound = () =>
        new HttpError(404, `No such object: ${route.bucket}/${route.object}`, 'notFound');
      if (!object || (q.get('generation') && q.get('generation') !== String(object.generation)))
        throw notFound();
      const preconditions = preconditionsOf(q);
      const check = (current: ObjectMeta) => checkPreconditions(preconditions, current, 'write');
      if (method === 'GET' || method === 'HEAD') {
        checkPreconditions(preconditions, object, 'read');
        if (route.kind === 'download' || q.get('alt') === 'media') return await download(req, res, object);
        return sendJson(res, 200, fields(objectResource(base, object)));
      }
      if (method === 'PATCH' || method === 'PUT') {
        const patch = metaPatchOf(await readJson(req));
        // PUT is objects.update: the writable fields become the body's, the rest are cleared.
        const options = { replace: method === 'PUT', check };
        const updated = await store.patchObject(route.bucket, route.object, patch, options);
        if (!updated) throw notFound();
        return sendJson(res, 200, fields(objectResource(base, updated)));
      }
      if (method === 'DELETE') {
        if (!(await store.deleteObject(route.bucket, route.object, check))) throw notFound();
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
        // GCS leaves `items` out of an empty page.
        ...(page.names.length
          ? { items: page.names.map((name) => objectResource(base, bucket.objects.get(name)!)) }
          : {}),
        ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      }),
    );
    for (const name of faults.vanishing(page.names)) await store.deleteObject(bucketName, name);
  }

  async function download(req: IncomingMessage, res: ServerResponse, object: ObjectMeta): Promise<void> {
    const storedGzip = object.contentEncoding === 'gzip';
    // `Cache-Control: no-transform` on the object turns decompressive transcoding off
    // (cloud.google.com/storage/docs/transcoding): the stored gzip bytes, whatever the request accepts.
    const acceptsGzip =
      /\bno-transform\b/i.test(object.cacheControl ?? '') ||
      /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const headers: Record<string, string> = {
      'content-type': object.contentType,
      'x-goog-generation': String(object.generation),
      'x-goog-metageneration': String(object.metageneration),
      'x-goog-stored-content-encoding': storedGzip ? 'gzip' : 'identity',
      'x-goog-stored-content-length': String(object.size),
      'x-goog-hash': `crc32c=${object.crc32c}${object.md5Hash ? `,md5=${object.md5Hash}` : ''}`,
      etag: etagOf(object),
      'last-modified': new Date(object.updated).toUTCString(),
      'accept-ranges': 'bytes',
      ...(object.cacheControl ? { 'cache-control': object.cacheControl } : {}),
      ...(object.contentDisposition ? { 'content-disposition': object.contentDisposition } : {}),
      ...(object.contentLanguage ? { 'content-language': object.contentLanguage } : {}),
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

function optional<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: string };
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
