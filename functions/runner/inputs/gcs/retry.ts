/**
 * Retries of transient Cloud Storage failures (429, 5xx, network errors, timeouts) with
 * exponential backoff and full jitter; anything else (404, 403, a bad request) fails at
 * once, because trying again cannot help. Each attempt gets `timeoutMs`.
 *
 * @example
 *   const [files] = await withRetry(() => bucket.getFiles(query), { retries: 5, timeoutMs: 30_000, signal });
 */
import { sleep } from '../../sleep.ts';

export interface RetryPolicy {
  retries: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** First backoff; doubles per attempt up to `maxDelayMs`. Tests shorten it. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

export async function withRetry<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let failures = 0; ; failures++) {
    policy.signal?.throwIfAborted();
    try {
      return await withTimeout(attempt(), policy.timeoutMs);
    } catch (err) {
      if (failures >= policy.retries || !isTransient(err) || policy.signal?.aborted) throw err;
      await backoff(failures, policy);
    }
  }
}

/** Waits before retry number `failures + 1`: full jitter over an exponential ceiling. */
export function backoff(failures: number, policy: RetryPolicy): Promise<void> {
  const ceiling = Math.min(policy.maxDelayMs ?? 5_000, (policy.baseDelayMs ?? 100) * 2 ** failures);
  return sleep(Math.random() * ceiling, policy.signal);
}

export function isTransient(err: unknown): boolean {
  if (err instanceof TimeoutError) return true;
  const status = httpStatus(err);
  if (status !== undefined) return status === 408 || status === 429 || status >= 500;
  const e = err as { code?: unknown } | undefined;
  const code = String(e?.code ?? '');
  if (/^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|ERR_STREAM_PREMATURE_CLOSE)$/.test(code))
    return true;
  const message = String((err as Error | undefined)?.message ?? '');
  return /socket hang up|ECONNRESET|premature close|network|timed? ?out|aborted/i.test(message);
}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  if (!Number.isFinite(ms) || ms <= 0) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The HTTP status of a failed Cloud Storage request (the client puts it in `code`), if any. */
export function httpStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; status?: unknown; response?: { status?: unknown } } | undefined;
  const status = Number(e?.code ?? e?.status ?? e?.response?.status);
  return Number.isInteger(status) && status >= 100 && status < 600 ? status : undefined;
}
