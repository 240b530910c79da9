/**
 * Ctrl-C (SIGINT) and SIGTERM as the normal end of a command that runs until stopped
 * (`worker run`, `job run`, `events tail`): they abort a signal, and the command ends on
 * its own with exit 0, instead of Node's default of killing the process (130).
 *
 * @example
 *   const interrupt = untilInterrupted();
 *   try { await follow(interrupt.signal); } finally { interrupt.dispose(); }
 */
export interface Interrupt {
  signal: AbortSignal;
  /** Ends it as the signals do (a reader that went away, say). */
  stop(): void;
  /** Gives SIGINT and SIGTERM back to their defaults. */
  dispose(): void;
}

/** `also`: another signal that stops it (a test's). */
export function untilInterrupted(also?: AbortSignal): Interrupt {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  also?.addEventListener('abort', stop, { once: true });
  return {
    signal: controller.signal,
    stop,
    dispose() {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
    },
  };
}
