/**
 * Every core in use for reading objects: a pool of worker threads (one per core, or
 * `SLUICE_READ_THREADS`) that decompress, split and check objects' bytes and make their
 * JSON lines (read-task.ts), while the main thread downloads and delivers. Different
 * objects are read on different cores; one object's events stay in order. Memory stays
 * bounded per object: a worker asks for a few chunks ahead and hands back a few batches
 * ahead, then waits (read-protocol.ts), so a slow output slows the download.
 *
 * The workers start on first use and do not keep the process alive. A worker that dies
 * fails its tasks (the objects are read again next run: they were not fingerprinted) and
 * is replaced. So is one that does not answer a `cancel` within CANCEL_DEADLINE_MS (busy in
 * synchronous work: a stop must not wait for it, nor the next objects given to it): it is
 * terminated.
 *
 * @example
 *   const pool = sharedReadPool();
 *   if (pool) for await (const lines of pool.read(task, downloadBytes(...), problem)) await deliver(lines);
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { inflatesWhole } from '../inputs/gcs/decompress.ts';
import type { ProblemReporter } from '../inputs/gcs/payload.ts';
import type { JsonLines } from '../types.ts';
import { partsNeeded, type ReadPartName } from './read-parts.ts';
import type { ToMain, ToWorker } from './read-protocol.ts';
import type { ActionReport, ReadTask } from './read-task.ts';

interface Task {
  onMessage(message: ToMain): void;
  onWorkerGone(error: Error): void;
}

/** A thread with nothing to read for this long exits (its memory is given back). */
const IDLE_MS = 5_000;

/**
 * How long a thread may take to end a task it was told to stop (`cancel`) before it is
 * terminated, and its other tasks failed. A thread answers between two batches, and an
 * event's actions take at most MAX_EVENT_EVALUATION_MS (shared/job/actions/cel.ts, 1 s):
 * a thread silent for longer is stuck in one batch of slow events, or worse.
 */
export const CANCEL_DEADLINE_MS = 2_000;

/**
 * A thread told to stop a task and silent for this long is given no new task (it may be
 * stuck, and terminated with them): another thread is started instead. Threads answer in
 * a few ms when they are not stuck.
 */
const SILENT_MS = 250;

export interface ReadPoolOptions {
  /** How long a thread with nothing to read stays (default 5 s). */
  idleMs?: number;
  /** How long a thread told to stop a task may take (default CANCEL_DEADLINE_MS). */
  cancelDeadlineMs?: number;
}

class PoolWorker {
  readonly tasks = new Map<number, Task>();
  /**
   * Tasks still at work here: given and not yet done. A task that is done may wait for
   * the main thread to take its last batches (a row group read ahead, an object waiting
   * for its turn); it costs this thread nothing more, so new tasks go by this count.
   */
  working = 0;
  readonly worker: Worker;
  /** Parts of the thread's code it has been sent (read-parts.ts). */
  readonly parts = new Set<ReadPartName>();
  gone = false;
  #idle: NodeJS.Timeout | undefined;
  /** Tasks told to stop and not yet ended by the thread: since when, and the deadline to end them. */
  readonly #stopping = new Map<number, { deadline: NodeJS.Timeout; since: number }>();

  constructor(
    source: string,
    private readonly onExit: (worker: PoolWorker) => void,
    private readonly idleMs: number,
  ) {
    // No execArgv: the worker needs neither tsx nor the parent's flags (its code is bundled).
    this.worker = new Worker(source, { eval: true, execArgv: [] });
    this.worker.on('message', (message: ToMain) => {
      this.tasks.get(message.id)?.onMessage(message);
      if (message.t === 'done' || message.t === 'failed') this.#stopped(message.id);
    });
    this.worker.on('error', (error) => this.#fail(error));
    this.worker.on('exit', (code) => this.#fail(new Error(`a read worker thread exited (code ${code})`)));
    // After the listeners (adding a 'message' listener refs the worker again).
    this.worker.unref();
  }

  #fail(error: Error): void {
    if (this.gone) return;
    this.gone = true;
    for (const { deadline } of this.#stopping.values()) clearTimeout(deadline);
    this.#stopping.clear();
    for (const task of this.tasks.values()) task.onWorkerGone(error);
    this.tasks.clear();
    this.onExit(this);
  }

  /**
   * Tells the thread to stop task `id` (its reader gave up on it). A thread that has not
   * ended it within `deadlineMs` is terminated: its other tasks fail, and the pool starts
   * another thread for the next ones.
   */
  stop(id: number, deadlineMs: number): void {
    if (this.gone) return;
    const deadline = setTimeout(() => {
      this.#fail(
        new Error(
          `a read thread did not stop a read within ${deadlineMs} ms of being told to (busy in one batch of events): it was terminated`,
        ),
      );
      void this.worker.terminate();
    }, deadlineMs).unref();
    this.#stopping.set(id, { deadline, since: performance.now() });
    this.post({ t: 'cancel', id });
  }

  /** Told to stop a task SILENT_MS ago or more, and still at it: new tasks go elsewhere. */
  get silent(): boolean {
    const now = performance.now();
    for (const { since } of this.#stopping.values()) if (now - since >= SILENT_MS) return true;
    return false;
  }

  #stopped(id: number): void {
    const stopping = this.#stopping.get(id);
    if (!stopping) return;
    this.#stopping.delete(id);
    clearTimeout(stopping.deadline);
  }

  /** A worker with tasks keeps the process alive (their answers are awaited); an idle one does not. */
  add(id: number, task: Task): void {
    clearTimeout(this.#idle);
    this.tasks.set(id, task);
    if (this.tasks.size === 1) this.worker.ref();
  }

  remove(id: number): void {
    if (!this.tasks.delete(id) || this.tasks.size > 0) return;
    this.worker.unref();
    this.#idle = setTimeout(() => void this.retire(), this.idleMs).unref();
  }

  /** Leaves the pool at once (no task can be given to it any more), then exits. */
  retire(): Promise<number> {
    clearTimeout(this.#idle);
    this.#fail(new Error('the read pool was closed'));
    return this.worker.terminate();
  }

  post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    if (!this.gone) this.worker.postMessage(message, transfer);
  }
}

export class ReadPool {
  #workers: PoolWorker[] = [];
  #nextId = 1;
  /** The scripts of the parts, loaded with the first thread's. */
  #partSources: Record<ReadPartName, string> | undefined;

  constructor(
    readonly size: number,
    private readonly options: ReadPoolOptions = {},
  ) {}

  /** The object's JSON lines, read on another core from `raw`, its stored bytes. */
  async *read(
    task: ReadTask,
    raw: AsyncIterable<Buffer>,
    problem: ProblemReporter,
    /** What the task's actions did (with `task.actions`), as it happens. */
    onActions?: (report: ActionReport) => void,
    /** Other bytes of the object, when the task asks (a parquet row group). */
    readRange?: (start: number, end: number) => Promise<Uint8Array>,
    /**
     * The run's: once aborted, the read ends at once (with its reason), even while the thread
     * is busy, and the thread is told to stop (terminated if it does not, CANCEL_DEADLINE_MS).
     */
    signal?: AbortSignal,
  ): AsyncGenerator<JsonLines> {
    signal?.throwIfAborted();
    const worker = await this.#leastBusy(this.threadsFor(task));
    const id = this.#nextId++;
    const inbox: ToMain[] = [];
    let wake: (() => void) | undefined;
    let gone: Error | undefined;
    /** Whether the thread ended the task (`done` or `failed`), read or not. */
    let ended = false;
    let downloadError: unknown;
    let finished = false;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    let working = true;
    const stopWorking = () => {
      if (working) worker.working--;
      working = false;
    };
    // The bytes go to the worker as it asks for them, one download read at a time.
    const source = raw[Symbol.asyncIterator]();
    let wanted = 0;
    let feeding = false;
    let fed = false;
    const feed = async () => {
      if (feeding || fed) return;
      feeding = true;
      try {
        while (wanted > 0 && !finished) {
          wanted--;
          const next = await source.next();
          if (next.done) {
            fed = true;
            worker.post({ t: 'end', id });
            return;
          }
          const data = ownBytes(next.value);
          worker.post({ t: 'chunk', id, data }, [data.buffer as ArrayBuffer]);
        }
      } catch (err) {
        fed = true;
        downloadError = err;
        worker.post({ t: 'end', id, error: (err as Error).message ?? String(err) });
      } finally {
        feeding = false;
      }
    };
    worker.add(id, {
      onMessage(message) {
        if (message.t === 'more') {
          wanted += message.n;
          void feed();
          return;
        }
        if (message.t === 'problem') {
          problem(message.reason, message.detail);
          return;
        }
        if (message.t === 'range') {
          const { req } = message;
          const asked = readRange
            ? readRange(message.start, message.end)
            : Promise.reject(new Error('this read has no ranges to give'));
          asked.then(
            (bytes) => {
              const data = ownBytes(bytes);
              worker.post({ t: 'bytes', id, req, data }, [data.buffer as ArrayBuffer]);
            },
            (err) => worker.post({ t: 'bytes', id, req, error: (err as Error).message ?? String(err) }),
          );
          return;
        }
        if (message.t === 'done' || message.t === 'failed') {
          ended = true;
          stopWorking();
        }
        inbox.push(message);
        notify();
      },
      onWorkerGone(error) {
        gone = error;
        notify();
      },
    });
    const parts = partsNeeded(task).filter((name) => !worker.parts.has(name));
    for (const name of parts) worker.parts.add(name);
    worker.post({
      t: 'start',
      id,
      task,
      ...(parts.length > 0 ? { parts: parts.map((name) => this.#partSources![name]) } : {}),
    });
    const onAbort = () => notify();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        signal?.throwIfAborted();
        const message = inbox.shift();
        if (!message) {
          if (gone) throw gone;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          continue;
        }
        if (message.t === 'batch') {
          const chunks = message.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength));
          worker.post({ t: 'credit', id });
          if (message.actions) onActions?.(message.actions);
          if (message.count > 0) yield { chunks, count: message.count, release: reuse(worker, chunks) };
        } else if (message.t === 'done') {
          finished = true;
          return;
        } else if (message.t === 'failed') {
          finished = true;
          // The download's own error (its HTTP status) rather than its echo from the worker.
          throw (
            downloadError ??
            Object.assign(
              new Error(message.message),
              message.code !== undefined ? { code: message.code } : {},
            )
          );
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      finished = true;
      stopWorking();
      if (!ended) worker.stop(id, this.options.cancelDeadlineMs ?? CANCEL_DEADLINE_MS);
      worker.remove(id);
      await source.return?.(undefined);
    }
  }

  /**
   * How many of the pool's threads a task may use. Light tasks (no parquet, no actions,
   * not inflated whole) leave a core to the main thread: one fewer than the pool, at least
   * one. For such a task the main thread's part (download, hand-overs, output) is as large
   * as the thread's, and zlib's stream runs on libuv's threads: on 2 cores, `sluice job
   * run` over 40 gzip NDJSON objects took 1.70 s with one read thread against 1.86 s with
   * two (medians of 10 alternating runs), as each thread also costs V8 its own optimising
   * of the reading code. With actions the threads do more, and two took 2.37 s against
   * 2.51 s. An object a thread inflates whole (decompress.ts `inflatesWhole`) is inflated on
   * that thread itself, so there both are used: the same 40 objects took 1.505 s against
   * 1.71 s with one thread and the stream (medians of 10 alternating runs).
   */
  threadsFor(task: Pick<ReadTask, 'meta' | 'preprocessors' | 'parquet' | 'actions'>): number {
    if (partsNeeded(task).length > 0 || inflatesWhole(task.meta, task.preprocessors)) return this.size;
    return Math.max(1, this.size - 1);
  }

  /**
   * The thread for a new task, among the first `limit`, its `working` count raised at once
   * (before any await): tasks started together, as a parquet object's row groups are, each
   * see the others.
   */
  async #leastBusy(limit: number): Promise<PoolWorker> {
    const take = (worker: PoolWorker) => {
      worker.working++;
      return worker;
    };
    // A thread silent since it was told to stop may be stuck: not counted, not given more
    // (it ends its tasks soon, or is terminated, CANCEL_DEADLINE_MS).
    const workers = this.#workers.filter((w) => !w.silent);
    if (workers.length < limit) {
      const idle = workers.find((w) => w.working === 0);
      if (idle) return take(idle);
      // Loaded with the first thread: a process that reads no object never parses it.
      const { READ_WORKER_SOURCE, READ_WORKER_PARTS } = await import('./read-worker.generated.ts');
      this.#partSources = READ_WORKER_PARTS;
      if (this.#workers.filter((w) => !w.silent).length >= limit) return this.#leastBusy(limit);
      const worker = new PoolWorker(
        READ_WORKER_SOURCE,
        (dead) => {
          this.#workers = this.#workers.filter((w) => w !== dead);
        },
        this.options.idleMs ?? IDLE_MS,
      );
      this.#workers.push(worker);
      return take(worker);
    }
    return take(workers.slice(0, limit).reduce((a, b) => (b.working < a.working ? b : a)));
  }

  /** Stops the workers (tests; the process may also just exit). */
  async close(): Promise<void> {
    await Promise.all([...this.#workers].map((w) => w.retire()));
  }

  /** Threads running now. */
  get threads(): number {
    return this.#workers.length;
  }

  /** Per thread, its tasks still at work. */
  get workingPerThread(): number[] {
    return this.#workers.map((w) => w.working);
  }

  /** Read tasks on the threads now. */
  get tasksRunning(): number {
    return this.#workers.reduce((sum, w) => sum + w.tasks.size, 0);
  }
}

/** Hands a batch's buffers back to the thread that filled them, once (read-worker.ts reuses them). */
function reuse(worker: PoolWorker, chunks: Buffer[]): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // Detached already (a buffer handed on elsewhere) has no bytes: nothing to give back.
    const buffers = [...new Set(chunks.map((c) => c.buffer as ArrayBuffer))].filter((b) => b.byteLength > 0);
    worker.post({ t: 'reuse', buffers }, buffers);
  };
}

/**
 * A copy of the bytes in a buffer of their own, handed over. Never the download's own
 * buffer: it may be a view into memory the HTTP client still uses. (Copying a compressed
 * chunk costs far less than what the worker then does with it.)
 */
function ownBytes(chunk: Uint8Array): Uint8Array {
  return new Uint8Array(chunk);
}

let shared: ReadPool | undefined | null;

/**
 * The process's pool: as many threads as cores (`SLUICE_READ_THREADS` overrides; 0 reads
 * on the main thread, as does a machine with one core).
 */
export function sharedReadPool(env: NodeJS.ProcessEnv = process.env): ReadPool | undefined {
  if (shared === undefined) {
    const size = readThreads(env);
    shared = size > 0 ? new ReadPool(size) : null;
  }
  return shared ?? undefined;
}

export function readThreads(env: NodeJS.ProcessEnv): number {
  // The thread's script takes Node's built-in modules from process.getBuiltinModule
  // (Node 20.16 and later); an older Node reads on the main thread.
  if (typeof (process as { getBuiltinModule?: unknown }).getBuiltinModule !== 'function') return 0;
  const value = env.SLUICE_READ_THREADS;
  if (value === undefined || value === '') {
    const cores = availableParallelism();
    return cores > 1 ? cores : 0;
  }
  if (!/^\d{1,3}$/.test(value)) throw new Error(`SLUICE_READ_THREADS must be a whole number, got "${value}"`);
  return Number(value);
}
