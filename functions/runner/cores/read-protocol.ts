/**
 * The messages between read-pool.ts (main thread) and read-worker.ts (each worker
 * thread), per read task `id`.
 */
import type { ActionReport, ReadTask } from './read-task.ts';

/** Chunks of stored bytes a task asks for ahead of what it decompresses. */
export const CHUNKS_AHEAD = 2;
/** Batches a task hands back before it waits for the main thread to take them. */
export const BATCHES_AHEAD = 4;
/**
 * The same for a parquet row group, in slices of PARQUET_SLICE_ROWS: about a whole row
 * group of the usual size (parquet's writers default to 122,880 or 1,048,576 rows or
 * 128 MB), so that the next row group is decoded while this one goes out. Its decoded
 * columns are in the thread's memory anyway.
 */
export const PARQUET_BATCHES_AHEAD = 32;
export const PARQUET_SLICE_ROWS = 4096;

export type ToWorker =
  /** A task, with the scripts of the parts it needs that the thread has not loaded (read-parts.ts). */
  | { t: 'start'; id: number; task: ReadTask; parts?: string[] }
  | { t: 'chunk'; id: number; data: Uint8Array }
  /** The object's bytes are all sent, or the download failed (`error`). */
  | { t: 'end'; id: number; error?: string }
  /** The main thread took a batch. */
  | { t: 'credit'; id: number }
  | { t: 'cancel'; id: number }
  /** Batch buffers the output is done with, for the thread to fill again (any task's). */
  | { t: 'reuse'; buffers: ArrayBuffer[] }
  /** Bytes `range` asked for (or why they could not be read). */
  | { t: 'bytes'; id: number; req: number; data?: Uint8Array; error?: string };

export type ToMain =
  | { t: 'more'; id: number; n: number }
  /** Bytes `start` to `end` (exclusive) of the stored object, beyond those fed (parquet). */
  | { t: 'range'; id: number; req: number; start: number; end: number }
  /** JSON lines (none when only `actions` has news), and what the task's actions did meanwhile. */
  | { t: 'batch'; id: number; chunks: Uint8Array[]; count: number; actions?: ActionReport }
  | { t: 'problem'; id: number; reason: string; detail?: Record<string, unknown> }
  | { t: 'done'; id: number }
  /** `code`: the error's own (zlib's `Z_DATA_ERROR`), so a failure reads as on the main thread. */
  | { t: 'failed'; id: number; message: string; code?: string | number };
