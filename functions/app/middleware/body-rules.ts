/**
 * Request bodies: at most 1 MiB (413), of a media type the route accepts (415), and, when
 * JSON, nested at most MAX_JSON_DEPTH deep (400). Checked before any route code runs, so a
 * refused request touches nothing.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../../../shared/errors.ts';
import type { AppEnv } from '../env.ts';
import type { RouteFamily } from '../router.ts';

export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * How much of an oversized body is read and thrown away before answering 413. A server that
 * answers and closes while the client is still sending resets the connection, and the client
 * then sees a socket error instead of the 413; reading the rest first lets it read the answer.
 * Beyond this the answer goes out with `Connection: close` and the client may see a reset.
 */
export const MAX_DISCARDED_BYTES = 32 * 1024 * 1024;
/**
 * How deep a JSON body may nest objects and arrays (the body itself is the first level).
 * Validation, zod and the walks of the shared core recurse over parsed bodies; a body of
 * `[[[...]]]` 5,000 levels deep overflowed their stack (a 500). No route takes anything
 * near this deep: context values nest at most 32 levels, message payloads 20.
 */
export const MAX_JSON_DEPTH = 64;

export function limitBodySize(): MiddlewareHandler<AppEnv> {
  return async function bodySizeMiddleware(c, next) {
    const body = c.req.raw.body;
    if (!body) return await next();
    const declared = c.req.raw.headers.get('content-length');
    if (declared !== null && !c.req.raw.headers.has('transfer-encoding')) {
      // Node frames the body by Content-Length, so a body within it cannot grow past it.
      if (Number(declared) <= MAX_BODY_BYTES) return await next();
      return await refuse(c, body.getReader(), 0);
    }
    // No length given (chunked): count while buffering, up to the limit.
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) return await refuse(c, reader, size);
      chunks.push(value);
    }
    c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks, size) });
    await next();
  };
}

async function refuse(
  c: Context<AppEnv>,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  read: number,
): Promise<never> {
  let total = read;
  let whole = false;
  while (total <= MAX_DISCARDED_BYTES) {
    const { done, value } = await reader.read();
    if (done) {
      whole = true;
      break;
    }
    total += value.byteLength;
  }
  if (!whole) {
    c.header('connection', 'close');
    await reader.cancel().catch(() => {});
  }
  throw new ApiError('payload_too_large', 'request body is larger than 1 MiB');
}

type MediaRule = NonNullable<RouteFamily['bodyMediaTypes']>[number];

export function requireBodyMediaType(rules: MediaRule[]): MiddlewareHandler<AppEnv> {
  return async function bodyMediaTypeMiddleware(c, next) {
    if (hasBody(c.req.raw)) {
      const type = mediaTypeOf(c.req.header('content-type'));
      const rule = rules.find((r) => r.method === c.req.method && r.path.test(c.req.path));
      const accepted = rule ? rule.types : ['application/json'];
      if (!accepted.includes(type)) {
        throw new ApiError(
          'unsupported_media_type',
          `Content-Type must be ${accepted.join(' or ')}${type ? `, not ${type}` : ''}`,
        );
      }
      if (isJsonType(type)) await refuseDeepJson(c);
    }
    await next();
  };
}

/**
 * Refuses (400) a JSON body nested deeper than MAX_JSON_DEPTH, before anything parses or
 * walks it. The body is read as bytes, which Hono keeps for the route (`c.req.json()`,
 * `c.req.arrayBuffer()` read the same bytes again).
 */
async function refuseDeepJson(c: Context<AppEnv>): Promise<void> {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (!jsonNestsDeeper(bytes, MAX_JSON_DEPTH)) return;
  const message = `objects and arrays may nest at most ${MAX_JSON_DEPTH} levels deep`;
  throw ApiError.invalid(`invalid request body: ${message}`, [{ path: '', message }]);
}

/**
 * Whether JSON text opens more than `limit` objects and arrays inside one another. One pass,
 * no recursion and no parsing: brackets inside strings do not count. Works on UTF-8 bytes,
 * since `"`, `\`, `[`, `]`, `{` and `}` never occur inside a multi-byte character.
 * Malformed JSON is left for the parser to refuse.
 */
export function jsonNestsDeeper(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // a backslash escapes the next byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      if (++depth > limit) return true;
    } else if ((b === 0x5d || b === 0x7d) && depth > 0) depth--;
  }
  return false;
}

/** `application/json` and the `+json` types (what Hono's validator parses as JSON). */
function isJsonType(type: string): boolean {
  return /^application\/([\w.-]+\+)?json$/.test(type);
}

/** The media type of a Content-Type header, lower case, without parameters (`charset=...`). */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** HTTP/1.1: a body exists when Content-Length > 0 or Transfer-Encoding is set; in-process requests carry neither. */
function hasBody(req: Request): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const length = req.headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  if (req.headers.has('transfer-encoding')) return true;
  return req.body !== null && req.headers.has('content-type');
}
