/**
 * Turns a crash of the parquet decoder into a failed read. parquet-wasm does not check all
 * damaged data: a Rust panic becomes a WebAssembly trap thrown inside one of its own promise
 * callbacks (run as microtasks), so the read never settles and the trap surfaces as an
 * uncaught exception, which ends a Node process. While reads are open, one listener fails
 * every open read on such a trap (they share the one wasm instance); the object is
 * reported and the run goes on. Any other uncaught exception keeps its usual fate: when
 * no one else listens, the process prints it and exits with code 1, as Node would.
 *
 * @example
 *   const guard = trapGuard();
 *   try { const table = await guard.wait(parquet.read(...)); } finally { guard.close(); }
 */

export interface TrapGuard {
  /** `promise`, or a rejection if the decoder traps first. */
  wait<T>(promise: Promise<T>): Promise<T>;
  close(): void;
}

const open = new Set<(error: Error) => void>();

export function trapGuard(): TrapGuard {
  let fail!: (error: Error) => void;
  const trapped = new Promise<never>((_, reject) => {
    fail = reject;
  });
  trapped.catch(() => {});
  open.add(fail);
  if (open.size === 1) process.on('uncaughtException', onUncaught);
  return {
    wait: (promise) => Promise.race([promise, trapped]),
    close() {
      open.delete(fail);
      if (open.size === 0) process.off('uncaughtException', onUncaught);
    },
  };
}

function onUncaught(error: unknown): void {
  if (error instanceof WebAssembly.RuntimeError) {
    const failure = new Error(`the parquet decoder failed on damaged data (${error.message})`);
    for (const fail of open) fail(failure);
    return;
  }
  if (process.listenerCount('uncaughtException') === 1) {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  }
}
