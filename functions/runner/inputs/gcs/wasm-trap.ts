/**
 * Turns a crash of the parquet decoder into a failed read of the object that crashed it.
 * parquet-wasm does not check all damaged data: a Rust panic becomes a WebAssembly trap
 * thrown inside one of its own promise callbacks (run as microtasks), so the read never
 * settles and the trap surfaces as an uncaught exception, which ends a Node process. While
 * reads are open, one listener takes such traps; any other uncaught exception keeps its
 * usual fate: when no one else listens, the process prints it and exits with code 1.
 *
 * The trap does not say whose read it was. The objects read at once share the decoder (one
 * WebAssembly instance per thread), which polls the pending reads of all of them in one
 * microtask, so a trap in one also strands those polled after it until the decoder is
 * next called. So each call into the decoder is a step (`run`), and a trap cuts short
 * every step in flight. A step that was the only one in flight trapped on its own data; the
 * others are run again, one at a time with nothing else in flight, so that a trap then
 * names its object: that object fails, and the others carry on where they were. The
 * instance itself stays usable after a trap (later reads decode as before), so nothing
 * needs a new one.
 *
 * @example
 *   const guard = trapGuard();
 *   try { const table = await guard.run(() => parquet.read(...), (t) => t.free()); } finally { guard.close(); }
 */

export interface TrapGuard {
  /**
   * `start()`'s result. Started again when another object's trap cut it short (a value
   * that comes after all is handed to `discard`); rejects if it trapped on its own data.
   */
  run<T>(start: () => Promise<T>, discard?: (value: T) => void): Promise<T>;
  close(): void;
}

/** How a step in flight ended when a trap cut it short. */
interface Cut {
  /** It was the only step in flight: the trap was its own (or a stranded step's, see `run`). */
  alone: boolean;
  message: string;
}

type Landing<T> = { value: T } | { cut: Cut };

const inFlight = new Set<(cut: Cut) => void>();
let guards = 0;

export function trapGuard(): TrapGuard {
  if (guards++ === 0) process.on('uncaughtException', onUncaught);
  let closed = false;
  return {
    async run(start, discard) {
      let aloneTraps = 0;
      for (let attempt = 0; ; attempt++) {
        const landing = attempt === 0 ? await shared(start, discard) : await alone(() => fly(start, discard));
        if ('value' in landing) return landing.value;
        // A step cut short leaves its task in the decoder, and the next call into it runs that
        // task too: a second damaged object's stranded read can trap during this step's run
        // alone. A damaged row group traps each time, so twice alone is this step's own.
        if (landing.cut.alone && ++aloneTraps === 2)
          throw new Error(`the parquet decoder failed on damaged data (${landing.cut.message})`);
      }
    },
    close() {
      if (closed) return;
      closed = true;
      if (--guards === 0) process.off('uncaughtException', onUncaught);
    },
  };
}

function onUncaught(error: unknown): void {
  if (error instanceof WebAssembly.RuntimeError) {
    // With no step in flight, the trap was a stranded step's, whose object was told already.
    const cut = { alone: inFlight.size === 1, message: error.message };
    for (const end of [...inFlight]) end(cut);
    return;
  }
  if (process.listenerCount('uncaughtException') === 1) {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  }
}

/** `start()` as a step in flight until it settles or a trap cuts it short. */
function fly<T>(start: () => Promise<T>, discard?: (value: T) => void): Promise<Landing<T>> {
  return new Promise((resolve, reject) => {
    const end = (cut: Cut) => {
      land(end);
      resolve({ cut });
    };
    inFlight.add(end);
    let promise: Promise<T>;
    try {
      promise = start();
    } catch (error) {
      land(end);
      reject(error);
      return;
    }
    promise.then(
      (value) => {
        if (!inFlight.has(end)) return discard?.(value);
        land(end);
        resolve({ value });
      },
      (error) => {
        if (!inFlight.has(end)) return;
        land(end);
        reject(error);
      },
    );
  });
}

// Steps run again one at a time (`alone`); while any wait or run, no other step starts.
let turns: Promise<unknown> = Promise.resolve();
let waiting = 0;
let gate: { opened: Promise<void>; open: () => void } | undefined;
let landed: (() => void)[] = [];

function shared<T>(start: () => Promise<T>, discard?: (value: T) => void): Promise<Landing<T>> {
  return gate ? gate.opened.then(() => shared(start, discard)) : fly(start, discard);
}

function alone<T>(step: () => Promise<T>): Promise<T> {
  if (waiting++ === 0) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    gate = { opened, open };
  }
  const turn = turns
    .then(() => (inFlight.size === 0 ? undefined : new Promise<void>((resolve) => landed.push(resolve))))
    .then(step)
    .finally(() => {
      if (--waiting > 0) return;
      gate?.open();
      gate = undefined;
    });
  turns = turn.catch(() => {});
  return turn;
}

function land(end: (cut: Cut) => void): void {
  inFlight.delete(end);
  if (inFlight.size > 0) return;
  const waiters = landed;
  landed = [];
  for (const resolve of waiters) resolve();
}
