/**
 * Waits of the runner and the worker runtime, of any length (a yearly cron beat is over the
 * 24.8 days a Node timer keeps; Node fires a longer one after 1 ms instead), that end early
 * when `signal` aborts and leave no listener on it behind: a worker retrying through a long
 * outage waits hundreds of times on one signal.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  const until = Date.now() + ms;
  for (let left = ms; left > 0; left = until - Date.now())
    await sleepAtMost(Math.min(left, MAX_TIMER_MS), signal);
}

/** Waits `ms`, or less when the signal aborts; never rejects for that. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, signal).catch((err: unknown) => {
    if (!signal.aborted) throw err;
  });
}

function sleepAtMost(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
