/**
 * The worker thread of read-pool.ts: runs the read tasks the main thread sends it
 * (read-task.ts), several at once, each fed its object's bytes on demand and handing
 * back its JSON lines as it makes them. Bundled into read-worker.generated.ts (`npm run
 * build:workers`) so that it starts the same way from tsx, the tests, the CLI bundle and
 * the functions' bundles.
 *
 * Per task, flow is bounded both ways: it asks for at most CHUNKS_AHEAD chunks ahead, and
 * keeps at most BATCHES_AHEAD batches (PARQUET_BATCHES_AHEAD for a parquet row group)
 * unconsumed by the main thread before it waits. A row group's reader may also ask the
 * main thread for other ranges of the object (`range`).
 */
import { runInThisContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import type { ActionChain, ActionFailure } from '../actions/chain.ts';
import {
  BATCHES_AHEAD,
  CHUNKS_AHEAD,
  PARQUET_BATCHES_AHEAD,
  type ToMain,
  type ToWorker,
} from './read-protocol.ts';
import { type ReadTask, readTaskBatches } from './read-task.ts';

interface Running {
  chunks: Buffer[];
  ended: boolean;
  failed?: string;
  /** Chunks asked for and not yet received. */
  asked: number;
  /** Batches handed back and not yet consumed. */
  unconsumed: number;
  /** Waiting for the main thread: the download feeder of zlib and the batch loop may both wait. */
  waiting: (() => void)[];
  cancelled: boolean;
  /** Range reads asked of the main thread and not yet answered. */
  ranges: Map<number, { resolve: (bytes: Uint8Array) => void; reject: (error: Error) => void }>;
}

const port = parentPort!;
const running = new Map<number, Running>();
/** Each job's actions, compiled once in this thread. */
const chains = new Map<string, ActionChain & { failures: ActionFailure[] }>();
const post = (message: ToMain, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/**
 * Batch buffers the main thread handed back once the output wrote them (`reuse`): filled
 * again instead of allocating. Without them every batch was a fresh allocation, and the
 * main thread's garbage collector freed them, in full collections when `ordered` held them.
 */
const spare: ArrayBuffer[] = [];
const SPARE_BUFFERS = 16;
const allocate = (bytes: number): Buffer => {
  for (let i = spare.length - 1; i >= 0; i--) {
    if (spare[i]!.byteLength < bytes) continue;
    const [buffer] = spare.splice(i, 1);
    return Buffer.from(buffer!, 0, buffer!.byteLength);
  }
  return Buffer.allocUnsafeSlow(bytes);
};

port.on('message', (message: ToWorker) => {
  if (message.t === 'reuse') {
    for (const buffer of message.buffers) if (spare.length < SPARE_BUFFERS) spare.push(buffer);
    return;
  }
  if (message.t === 'start') {
    const task: Running = {
      chunks: [],
      ended: false,
      asked: 0,
      unconsumed: 0,
      cancelled: false,
      waiting: [],
      ranges: new Map(),
    };
    running.set(message.id, task);
    try {
      // Parts of this thread's code the task needs, sent with the first such task.
      for (const source of message.parts ?? []) runInThisContext(source);
    } catch (err) {
      running.delete(message.id);
      post({
        t: 'failed',
        id: message.id,
        message: `could not load the read thread's code: ${(err as Error).message}`,
      });
      return;
    }
    void run(message.id, message.task, task);
    return;
  }
  const task = running.get(message.id);
  if (!task) return;
  if (message.t === 'chunk') {
    task.asked--;
    task.chunks.push(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
  } else if (message.t === 'end') {
    task.ended = true;
    if (message.error !== undefined) task.failed = message.error;
  } else if (message.t === 'credit') {
    task.unconsumed--;
  } else if (message.t === 'cancel') {
    task.cancelled = true;
    for (const range of task.ranges.values()) range.reject(new Error('the read was cancelled'));
    task.ranges.clear();
  } else if (message.t === 'bytes') {
    const range = task.ranges.get(message.req);
    task.ranges.delete(message.req);
    if (message.data) range?.resolve(message.data);
    else range?.reject(new Error(message.error ?? 'the range read failed'));
  }
  const waiting = task.waiting;
  task.waiting = [];
  for (const wake of waiting) wake();
});

async function run(id: number, spec: ReadTask, task: Running): Promise<void> {
  const waitForMain = () =>
    new Promise<void>((resolve) => {
      task.waiting.push(resolve);
    });
  const ask = () => {
    const wanted = CHUNKS_AHEAD - task.chunks.length - task.asked;
    if (task.ended || wanted <= 0) return;
    task.asked += wanted;
    post({ t: 'more', id, n: wanted });
  };
  async function* chunks(): AsyncGenerator<Buffer> {
    for (;;) {
      ask();
      const chunk = task.chunks.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (task.failed !== undefined) throw new Error(task.failed);
      if (task.ended || task.cancelled) return;
      await waitForMain();
    }
  }
  let requests = 0;
  const readRange = (start: number, end: number) =>
    new Promise<Uint8Array>((resolve, reject) => {
      if (task.cancelled) return reject(new Error('the read was cancelled'));
      const req = ++requests;
      task.ranges.set(req, { resolve, reject });
      post({ t: 'range', id, req, start, end });
    });
  const ahead = spec.parquet ? PARQUET_BATCHES_AHEAD : BATCHES_AHEAD;
  try {
    for await (const batch of readTaskBatches(
      spec,
      chunks(),
      (reason, detail) => post({ t: 'problem', id, reason, ...(detail ? { detail } : {}) }),
      { chains, readRange, allocate },
    )) {
      while (task.unconsumed >= ahead && !task.cancelled) await waitForMain();
      if (task.cancelled) break;
      task.unconsumed++;
      // A batch's buffers are its own (batches.ts allocates them per batch, whole
      // ArrayBuffers, never Buffer's shared pool): handed over, not copied.
      const chunks = (batch.lines?.chunks ?? []).map(
        (c) => new Uint8Array(c.buffer, c.byteOffset, c.byteLength),
      );
      post(
        {
          t: 'batch',
          id,
          chunks,
          count: batch.lines?.count ?? 0,
          ...(batch.actions ? { actions: batch.actions } : {}),
        },
        [...new Set(chunks.map((c) => c.buffer as ArrayBuffer))],
      );
    }
    post({ t: 'done', id });
  } catch (err) {
    const { code } = err as { code?: unknown };
    post({
      t: 'failed',
      id,
      message: (err as Error).message,
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    });
  } finally {
    running.delete(id);
  }
}
