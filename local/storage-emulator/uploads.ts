/**
 * Object uploads: `uploadType=media`, `multipart` (metadata part + media part) and
 * `resumable` sessions (POST to start, PUTs of chunks with Content-Range, an empty PUT
 * with `bytes * /N` to ask how far it got, DELETE to cancel). As GCS does, a session that
 * completed keeps answering with its object (a client that lost the final response
 * recovers), a cancelled one answers 499, bytes past the declared size and supplied
 * md5Hash/crc32c that do not match the data are 400s. Uploads are held in memory until
 * complete, so their size and the number of open sessions are capped.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checksumsOf } from './checksums.ts';
import { HttpError } from './http-error.ts';
import { checkPreconditions, type Preconditions, preconditionsOf } from './preconditions.ts';
import { MAX_JSON_BYTES, metaOf, metaPatchOf, parseJsonObject, readBody, tooLarge } from './request-body.ts';
import { objectResource } from './resources.ts';
import { requireName } from './routes.ts';
import type { ObjectMeta, ObjectStore, WritableMeta } from './store.ts';

export interface UploadLimits {
  /** The largest object an upload may make (it is held in memory until complete). */
  maxObjectBytes: number;
  /** Open resumable sessions; the oldest are forgotten beyond this. */
  maxSessions: number;
}

export const DEFAULT_UPLOAD_LIMITS: UploadLimits = {
  maxObjectBytes: 2 * 1024 * 1024 * 1024,
  maxSessions: 10_000,
};

interface UploadSession {
  bucket: string;
  name: string;
  meta: WritableMeta;
  expected: SuppliedHashes;
  preconditions: Preconditions;
  chunks: Buffer[];
  received: number;
  /** The object it made, once complete. */
  done?: ObjectMeta;
  cancelled?: boolean;
}

interface SuppliedHashes {
  md5Hash?: string;
  crc32c?: string;
}

const DEFAULT_TYPE = 'application/octet-stream';

export function createUploads(store: ObjectStore, baseUrl: () => string, limits: UploadLimits) {
  const sessions = new Map<string, UploadSession>();

  async function start(req: IncomingMessage, res: ServerResponse, bucket: string, q: URLSearchParams) {
    const type = q.get('uploadType') ?? 'media';
    const preconditions = preconditionsOf(q);
    if (type === 'media') {
      const body = await readBody(req, limits.maxObjectBytes);
      const name = requireName(q.get('name'));
      const meta = {
        contentType: String(req.headers['content-type'] ?? DEFAULT_TYPE),
        ...(q.get('contentEncoding') ? { contentEncoding: q.get('contentEncoding')! } : {}),
      };
      return await finish(res, bucket, name, body, meta, hashesOf(req), preconditions);
    }
    if (type === 'multipart') {
      const body = await readBody(req, limits.maxObjectBytes + MAX_JSON_BYTES);
      const { metadata, data } = parseMultipart(String(req.headers['content-type'] ?? ''), body);
      const name = requireName(metadata.name ?? q.get('name'));
      if (data.length > limits.maxObjectBytes) throw tooLarge(limits.maxObjectBytes);
      const expected = { ...hashesOf(req), ...suppliedHashes(metadata) };
      return await finish(res, bucket, name, data, metaFrom(metadata), expected, preconditions);
    }
    if (type === 'resumable') {
      const metadata = parseJsonObject(await readBody(req, MAX_JSON_BYTES));
      const name = requireName(metadata.name ?? q.get('name'));
      const declared = Number(req.headers['x-upload-content-length'] ?? 0);
      if (declared > limits.maxObjectBytes) throw tooLarge(limits.maxObjectBytes);
      const declaredType = req.headers['x-upload-content-type'];
      const id = randomUUID();
      while (sessions.size >= limits.maxSessions) sessions.delete(sessions.keys().next().value!);
      sessions.set(id, {
        bucket,
        name,
        meta: metaFrom(metadata, typeof declaredType === 'string' ? declaredType : undefined),
        expected: suppliedHashes(metadata),
        preconditions,
        chunks: [],
        received: 0,
      });
      const location = `${baseUrl()}/upload/storage/v1/b/${bucket}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${id}`;
      res.writeHead(200, { location, 'x-guploader-uploadid': id, 'content-length': '0' });
      return void res.end();
    }
    throw new HttpError(400, `unsupported uploadType ${type}`);
  }

  async function resume(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const session = sessions.get(id);
    if (!session) throw new HttpError(404, 'No such upload session (it may have expired).', 'notFound');
    if (session.cancelled)
      throw new HttpError(499, 'The upload session was cancelled.', 'clientClosedRequest');
    const body = await readBody(req, limits.maxObjectBytes);
    if (session.done) return sendObject(res, session.done);
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
        const received = session.received + fresh.length;
        if (total !== undefined && received > total)
          throw new HttpError(
            400,
            `The upload has more bytes (${received}) than its declared size (${total}).`,
          );
        if (received > limits.maxObjectBytes) throw tooLarge(limits.maxObjectBytes);
        session.chunks.push(fresh);
        session.received = received;
      }
    }
    if (total !== undefined && session.received >= total) {
      const data = Buffer.concat(session.chunks);
      session.chunks = [];
      const expected = { ...session.expected, ...hashesOf(req) };
      try {
        session.done = await write(
          session.bucket,
          session.name,
          data,
          session.meta,
          expected,
          session.preconditions,
        );
      } catch (err) {
        // A refused write (a precondition, a checksum) ends the session, as on GCS.
        sessions.delete(id);
        throw err;
      }
      return sendObject(res, session.done);
    }
    const headers: Record<string, string> = { 'content-length': '0' };
    if (session.received > 0) headers.range = `bytes=0-${session.received - 1}`;
    res.writeHead(308, headers);
    res.end();
  }

  /** DELETE on a session URI: GCS answers 499, and the session takes nothing more. */
  function cancel(id: string): void {
    const session = sessions.get(id);
    if (!session || session.done) throw new HttpError(404, 'No such upload session.', 'notFound');
    session.cancelled = true;
    session.chunks = [];
    throw new HttpError(499, 'Client Closed Request', 'clientClosedRequest');
  }

  async function finish(
    res: ServerResponse,
    bucket: string,
    name: string,
    data: Buffer,
    meta: WritableMeta,
    expected: SuppliedHashes,
    preconditions: Preconditions,
  ): Promise<void> {
    sendObject(res, await write(bucket, name, data, meta, expected, preconditions));
  }

  async function write(
    bucket: string,
    name: string,
    data: Buffer,
    meta: WritableMeta,
    expected: SuppliedHashes,
    preconditions: Preconditions,
  ): Promise<ObjectMeta> {
    verifyHashes(data, expected);
    return await store.putObject(bucket, name, data, meta, {
      check: (previous) => checkPreconditions(preconditions, previous, 'write'),
    });
  }

  function sendObject(res: ServerResponse, object: ObjectMeta): void {
    const text = JSON.stringify(objectResource(baseUrl(), object));
    res.writeHead(200, {
      'content-type': 'application/json; charset=UTF-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  return { start, resume, cancel };
}

function metaFrom(metadata: Record<string, unknown>, fallbackType?: string): WritableMeta {
  const meta = metaOf(metaPatchOf(metadata));
  return { ...meta, contentType: meta.contentType ?? fallbackType ?? DEFAULT_TYPE };
}

function suppliedHashes(metadata: Record<string, unknown>): SuppliedHashes {
  const out: SuppliedHashes = {};
  for (const key of ['md5Hash', 'crc32c'] as const) {
    const value = metadata[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw new HttpError(400, `Invalid value for ${key}`, 'invalid');
    out[key] = value;
  }
  return out;
}

/** `X-Goog-Hash: crc32c=...,md5=...` of a request: the client's hashes of the whole object. */
function hashesOf(req: IncomingMessage): SuppliedHashes {
  const out: SuppliedHashes = {};
  const header = req.headers['x-goog-hash'];
  for (const part of (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')) {
    const cut = part.indexOf('=');
    const [key, value] = [part.slice(0, cut).trim(), part.slice(cut + 1).trim()];
    if (key === 'md5') out.md5Hash = value;
    if (key === 'crc32c') out.crc32c = value;
  }
  return out;
}

function verifyHashes(data: Buffer, expected: SuppliedHashes): void {
  if (!expected.md5Hash && !expected.crc32c) return;
  const actual = checksumsOf(data);
  if (expected.md5Hash && expected.md5Hash !== actual.md5Hash)
    throw new HttpError(
      400,
      `Provided MD5 hash "${expected.md5Hash}" doesn't match calculated MD5 hash "${actual.md5Hash}".`,
      'invalid',
    );
  if (expected.crc32c && expected.crc32c !== actual.crc32c)
    throw new HttpError(
      400,
      `Provided CRC32C "${expected.crc32c}" doesn't match calculated CRC32C "${actual.crc32c}".`,
      'invalid',
    );
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
  const metadata = parseJsonObject(metaPart.body);
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
