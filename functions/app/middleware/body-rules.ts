/**
 * Request bodies: at most 1 MiB (413) and of a media type the route accepts (415).
 * Checked before any route code runs, so a refused request touches nothing.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../../../shared/errors.ts';
import type { AppEnv } from '../env.ts';
import type { RouteFamily } from '../router.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

export function limitBodySize(): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError('payload_too_large', 'request body is larger than 1 MiB');
    },
  });
}

type MediaRule = NonNullable<RouteFamily['bodyMediaTypes']>[number];

export function requireBodyMediaType(rules: MediaRule[]): MiddlewareHandler<AppEnv> {
  return async function bodyMediaTypeMiddleware(c, next) {
    if (hasBody(c.req.raw)) {
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const rule = rules.find((r) => r.method === c.req.method && r.path.test(c.req.path));
      const accepted = rule ? rule.types : ['application/json'];
      if (!accepted.includes(type)) {
        throw new ApiError(
          'unsupported_media_type',
          `Content-Type must be ${accepted.join(' or ')}${type ? `, not ${type}` : ''}`,
        );
      }
    }
    await next();
  };
}

/** HTTP/1.1: a body exists when Content-Length > 0 or Transfer-Encoding is set; in-process requests carry neither. */
function hasBody(req: Request): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const length = req.headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  if (req.headers.has('transfer-encoding')) return true;
  return req.body !== null && req.headers.has('content-type');
}
