/**
 * One place where failures become the contract's error body. Route code throws
 * `ApiError`; anything else is an internal error whose details go to the log only.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError, type ErrorBody } from '../../shared/errors.ts';
import type { AppEnv } from './env.ts';

export function errorResponse(c: Context, error: ApiError): Response {
  const headers: Record<string, string> = {};
  if (error.code === 'unauthenticated') headers['WWW-Authenticate'] = 'Bearer';
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(Math.ceil(error.retryAfter));
  return c.json<ErrorBody>(error.toBody(), error.status, headers);
}

export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError('payload_too_large', 'request body is larger than 1 MiB');
    if (err.status === 400) return ApiError.invalid(err.message || 'malformed request');
    if (err.status === 401) return ApiError.unauthenticated();
    if (err.status === 404) return ApiError.notFound(err.message || 'not found');
  }
  if (isBackendUnavailable(err))
    return ApiError.unavailable('a backing service is unavailable; retry shortly');
  // A Firestore transaction that lost to other writes of the same documents every time it
  // was tried: nothing was written, and the same request a moment later goes through.
  if ((err as { code?: unknown })?.code === ABORTED)
    return ApiError.unavailable(
      'other writes to the same data got in the way; nothing was changed, retry shortly',
      1,
    );
  return undefined;
}

export function onError(err: Error, c: Context<AppEnv>): Response {
  const apiError = toApiError(err);
  if (apiError) return errorResponse(c, apiError);
  c.get('logger')?.error({ err, requestId: c.get('requestId') }, 'unhandled error');
  return errorResponse(
    c,
    new ApiError('internal', 'internal error; see the server log for request ' + c.get('requestId')),
  );
}

export function onNotFound(c: Context<AppEnv>): Response {
  return errorResponse(c, ApiError.notFound(`no route for ${c.req.method} ${c.req.path}`));
}

/** gRPC's ABORTED. */
const ABORTED = 10;

/** gRPC UNAVAILABLE / DEADLINE_EXCEEDED or a refused connection from a Google client. */
function isBackendUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 14 || code === 4 || code === 'ECONNREFUSED';
}
