/**
 * Which request a path is: the GCS JSON API paths, with and without `/storage/v1` (the
 * Node client drops it under STORAGE_EMULATOR_HOST), uploads (also gcloud's
 * `/resumable/upload/...`), downloads and XML-style `/<bucket>/<object>`; and the refusal
 * of names that could be paths out of their folder, before anything is read or written.
 */
import type { RequestKind } from './faults.ts';
import { HttpError } from './http-error.ts';
import { bucketNameProblem, objectNameProblem } from './names.ts';

export type ObjectRoute = {
  kind: 'object' | 'download';
  bucket: string;
  object: string;
  action?: { verb: 'rewriteTo' | 'copyTo'; bucket: string; object: string };
};
export type Route =
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

export function parseRoute(pathname: string): Route {
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

export function kindOf(method: string, route: Route, url: URL): RequestKind {
  if (route.kind === 'objects') return 'list';
  if (route.kind === 'upload') return 'upload';
  if (route.kind === 'download' || (route.kind === 'object' && url.searchParams.get('alt') === 'media'))
    return 'download';
  if (route.kind === 'object' && method === 'GET') return 'metadata';
  return 'other';
}

export function requireName(name: unknown): string {
  if (typeof name !== 'string' || !name) throw new HttpError(400, 'Required parameter: name');
  const problem = objectNameProblem(name);
  if (problem) throw new HttpError(400, problem);
  return name;
}

/** Refuses, before anything is read or written, a route whose bucket or object name could be a path out of its folder. */
export function checkRouteNames(route: Route): void {
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
