/**
 * A request's deadline joined with the run's stop signal. Not
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: Node (20 and 22) holds that timeout
 * signal only weakly, so a garbage collection while the request waits drops it and the
 * request is never cut (nodejs/node#57736; seen here as an `http-post` retry test whose
 * hung request waited 19 s for a 1 s timeout). This timer is held until `clear()`.
 *
 * @example
 *   const deadline = requestDeadline(timeoutMs, ctx.signal);
 *   try {
 *     await fetch(url, { signal: deadline.signal });
 *   } finally {
 *     deadline.clear();
 *   }
 */
export interface RequestDeadline {
  /** Aborts with a `TimeoutError` after the time, or with the run's reason when it stops. */
  signal: AbortSignal;
  /** The request is over: the timer and the listener on the run's signal go. */
  clear(): void;
}

export function requestDeadline(ms: number, stop?: AbortSignal): RequestDeadline {
  const controller = new AbortController();
  const onStop = () => controller.abort(stop?.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  if (stop?.aborted) onStop();
  else stop?.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    },
  };
}
