/**
 * The worker API of a test app, called in process the way the worker runtime's HTTP client
 * calls it over HTTP: query, JSON body, and an error carrying the contract's `code`.
 * `inFlight` collects the requests: a stopped runtime leaves its long poll running in the
 * app, and a test awaits them (`Promise.allSettled`) before it closes the app, whose
 * Firestore client would otherwise be terminated under them (unhandled rejections).
 */
import type { WorkerApi } from '../../functions/runner/worker-runtime.ts';
import type { TestApp } from './app.ts';

export function inProcessWorkerApi(
  t: TestApp,
  headers: Record<string, string>,
  inFlight: Set<Promise<unknown>> = new Set(),
): WorkerApi {
  const call = async <T>(
    method: string,
    path: string,
    options: { query?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {},
  ) => {
    const { query, body, signal } = options;
    // As an HTTP client does: an aborted request is not sent.
    signal?.throwIfAborted();
    const answer = t.request(`${path}${query ? `?${new URLSearchParams(query)}` : ''}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    inFlight.add(answer);
    void answer.finally(() => inFlight.delete(answer)).catch(() => {});
    // As an HTTP client does: a stopping runtime does not wait for its long poll to end.
    const res = signal
      ? await Promise.race([
          answer,
          new Promise<never>((_, reject) => {
            if (signal.aborted) reject(signal.reason);
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
        ])
      : await answer;
    if (!res.ok) {
      const error = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
      throw Object.assign(new Error(`${res.status} ${error.error?.message ?? ''}`), {
        code: error.error?.code,
      });
    }
    return (res.status === 204 || res.status === 202 ? undefined : await res.json()) as T;
  };
  return {
    get: (path, options) => call('GET', path, options),
    post: (path, options) => call('POST', path, options),
  };
}
