/**
 * The browser's API client: same-origin requests authenticated by the session cookie,
 * with the CSRF cookie's value in `X-CSRF-Token` on every state-changing request.
 * Errors become `ApiFailure` carrying the contract's error body (`code`, `details`); a 429
 * says when to try again, from its `Retry-After`.
 *
 * @example
 *   const global = await api.get<ContextMap>('/api/contexts/global');
 *   await api.post('/api/contexts/update-global', { region: 'eu' });
 */
import { NEXT_PAGE_HEADER } from '../../shared/api/paging.ts';
import { retryAfterSeconds } from '../../shared/api/retry-after.ts';
import { cookieValue } from './lib/cookies.ts';
import { withRetryTime } from './lib/retry-after.ts';

export interface ErrorDetail {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** Seconds until a refused request may be tried again (`Retry-After` of a 429). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export type { ContextMap, JsonValue } from './lib/types.ts';

const CSRF_COOKIE = 'sluice_csrf';
/** Fired when the API answers 401: the session ended, the app shows the sign-in page. */
export const SIGNED_OUT_EVENT = 'sluice:signed-out';

async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  accept = 'application/json',
): Promise<T> {
  const headers: Record<string, string> = { accept };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') {
    const csrf = readCookie(CSRF_COOKIE);
    if (csrf) headers['x-csrf-token'] = csrf;
  }
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 204) return undefined as T;
  if (!res.ok) throw await failure(res, path);
  return (accept === 'application/json' ? await res.json() : await res.text()) as T;
}

/** One page of a list endpoint: its items and the next page's token (`X-Next-Page-Token`), if any. */
async function page<T>(path: string): Promise<{ items: T[]; next?: string }> {
  const res = await fetch(path, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  if (!res.ok) throw await failure(res, path);
  const next = res.headers.get(NEXT_PAGE_HEADER) ?? undefined;
  return { items: (await res.json()) as T[], ...(next ? { next } : {}) };
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  page,
  text: (path: string, accept: string) => request<string>('GET', path, undefined, accept),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
};

/**
 * Whether a session may exist: the readable CSRF cookie comes and goes with the
 * HttpOnly session cookie, so without it asking `/api/auth/me` would only get a 401.
 */
export function mayHaveSession(): boolean {
  return readCookie(CSRF_COOKIE) !== undefined;
}

/** `path` with its query string built from the defined values. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export const enc = encodeURIComponent;

async function failure(res: Response, path: string): Promise<ApiFailure> {
  let error: { code?: string; message?: string; details?: ErrorDetail[] } = {};
  try {
    error = ((await res.json()) as { error?: typeof error }).error ?? {};
  } catch {
    // Not the contract's body (a proxy error page, say): keep the status.
  }
  if (res.status === 401 && path !== '/api/auth/login') window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
  const message = error.message ?? `${res.status} ${res.statusText}`;
  // A 429 (too many failed sign-ins) says when, not just "later".
  const retryAfter = res.status === 429 ? retryAfterSeconds(res.headers.get('retry-after')) : undefined;
  return new ApiFailure(
    res.status,
    error.code ?? 'http_error',
    retryAfter === undefined ? message : withRetryTime(message, retryAfter),
    error.details ?? [],
    retryAfter,
  );
}

function readCookie(name: string): string | undefined {
  return cookieValue(document.cookie, name);
}
