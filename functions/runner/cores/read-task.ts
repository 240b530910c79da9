/**
 * What one object's read does on a core of its own (read-pool.ts): its stored bytes in,
 * its events out as JSON lines, exactly as the `gcs` input would make them on the main
 * thread (decompression, line splitting and checking, metadata spliced in). The task is
 * plain data, so it crosses to a worker thread; the same function runs there and, in
 * tests, here.
 *
 * @example
 *   for await (const lines of readTaskBatches(task, downloadedChunks, problem)) deliver(lines);
 */
import type { SchemaElement } from 'hyparquet';
import type { Action } from '../../../shared/job/actions/schema.ts';
import type { ActionChain, ActionFailure, ActionStats } from '../actions/chain.ts';
import type { RowSlice } from '../inputs/gcs/arrow-rows.ts';
import { type Allocate, jsonLines, jsonLinesWithActions } from '../inputs/gcs/batches.ts';
import type { Preprocessor } from '../inputs/gcs/config.ts';
import { applySteps, type Content, expandSteps, READ_THREAD_INFLATE } from '../inputs/gcs/decompress.ts';
import type { ShapePlan } from '../inputs/gcs/fields.ts';
import type { ObjectMeta } from '../inputs/gcs/list.ts';
import { contentEvents, type PayloadOptions, type ProblemReporter } from '../inputs/gcs/payload.ts';
import type { JsonLines } from '../types.ts';
import { actionsPart } from './read-part-actions.ts';
import { parquetPart } from './read-part-parquet.ts';
import { PARQUET_SLICE_ROWS } from './read-protocol.ts';

export interface ReadTask {
  meta: ObjectMeta;
  preprocessors: Preprocessor[];
  payload: PayloadOptions;
  shape: ShapePlan;
  /** The job's actions, applied where the lines are made, with the names they see. */
  actions?: { list: readonly Action[]; job: string; worker: string };
  /**
   * One row group of a parquet object (parquet-groups.ts): the bytes fed are the parts of
   * the object that `regions` say, in that order (its footer and the row group).
   */
  parquet?: {
    module: WebAssembly.Module;
    rowGroup: number;
    byteLength: number;
    schema: SchemaElement[];
    regions: { start: number; length: number }[];
  };
}

/** What a task's actions did while it made one batch. */
export interface ActionReport {
  stats: ActionStats;
  failures: ActionFailure[];
}

/**
 * How a task can go to another core: `bytes` as a stream of the object's stored bytes
 * (not parquet), `row-groups` as parquet read by row group (parquet-groups.ts; parquet
 * of the stored bytes, the one step), else not at all: parquet that an earlier step
 * (gzip) makes is read whole, on the main thread.
 */
export function anyCoreRead(
  task: Pick<ReadTask, 'meta' | 'preprocessors'>,
): 'bytes' | 'row-groups' | undefined {
  const steps = expandSteps(task.preprocessors, task.meta.name);
  if (!steps.includes('parquet')) return 'bytes';
  return steps.length === 1 ? 'row-groups' : undefined;
}

/** What a task may use of the thread it runs on. */
export interface TaskContext {
  /** Each job's actions, compiled once per thread and list of actions. */
  chains?: Map<string, ActionChain & { failures: ActionFailure[] }>;
  /** Bytes of the stored object beyond those fed (a parquet row group's reader may ask). */
  readRange?: (start: number, end: number) => Promise<Uint8Array>;
  /** Where the batches' buffers come from (the thread reuses those the output released). */
  allocate?: Allocate;
}

/** The task's batches, each with what its actions did meanwhile (when it has actions). */
export async function* readTaskBatches(
  task: ReadTask,
  chunks: AsyncIterable<Buffer>,
  problem: ProblemReporter,
  {
    chains = new Map(),
    readRange = () => Promise.reject(new Error('this task reads no ranges')),
    allocate,
  }: TaskContext = {},
): AsyncGenerator<{ lines?: JsonLines; actions?: ActionReport }> {
  const inflated: ArrayBuffer[] = [];
  const whole = { ...READ_THREAD_INFLATE, onInflated: (buffer: ArrayBuffer) => inflated.push(buffer) };
  // Without a parquet task, a parquet step is an error (anyCoreRead sends none here).
  const content: Content = task.parquet
    ? { kind: 'rows', rows: rowGroupRows(task.parquet, chunks, readRange) }
    : applySteps(chunks, task.meta, task.preprocessors, undefined, whole);
  try {
    yield* taskBatches(task, content, problem, chains, allocate);
  } finally {
    // Every batch is a copy, so nothing reads the inflated bytes now. Left to the collector,
    // a buffer that lived through a young collection waits for a full one (about every
    // 64 MB of them); moved to a new ArrayBuffer that dies young, its memory is freed at
    // the next young collection. Peak RSS of `sluice job run` over 40 small gzip objects:
    // 263-275 MB instead of 299-378 MB.
    for (const buffer of inflated) structuredClone(buffer, { transfer: [buffer] });
  }
}

async function* taskBatches(
  task: ReadTask,
  content: Content,
  problem: ProblemReporter,
  chains: Map<string, ActionChain & { failures: ActionFailure[] }>,
  allocate: Allocate | undefined,
): AsyncGenerator<{ lines?: JsonLines; actions?: ActionReport }> {
  const chain = task.actions && chainFor(task.actions, chains);
  const format = chain || allocate ? jsonLinesWithActions(chain, allocate) : jsonLines;
  for await (const lines of contentEvents(
    content,
    task.payload,
    format.batcher(task.shape, task.meta),
    problem,
  )) {
    if (!chain) {
      yield { lines };
      continue;
    }
    yield { lines, actions: { stats: chain.takeStats(), failures: chain.failures.splice(0) } };
  }
  // What the actions did after the last batch (the object's last events all dropped).
  if (chain) yield { actions: { stats: chain.takeStats(), failures: chain.failures.splice(0) } };
}

async function* rowGroupRows(
  spec: NonNullable<ReadTask['parquet']>,
  chunks: AsyncIterable<Buffer>,
  readRange: (start: number, end: number) => Promise<Uint8Array>,
): AsyncGenerator<RowSlice> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  const fed = Buffer.concat(parts);
  let at = 0;
  const regions = spec.regions.map(({ start, length }) => {
    const bytes = fed.subarray(at, at + length);
    at += length;
    return { start, bytes };
  });
  yield* parquetPart.parquetRows(
    parquetPart.sparseSource(spec.byteLength, regions, readRange),
    () => parquetPart.parquetModulesFor(spec.module),
    { rowGroups: [spec.rowGroup], schema: spec.schema, rowsPerSlice: PARQUET_SLICE_ROWS },
  );
}

function chainFor(
  actions: NonNullable<ReadTask['actions']>,
  chains: Map<string, ActionChain & { failures: ActionFailure[] }>,
): ActionChain & { failures: ActionFailure[] } {
  const key = JSON.stringify(actions);
  let chain = chains.get(key);
  if (!chain) {
    const failures: ActionFailure[] = [];
    // Failures are handed on as they are; the main thread's chain limits what is reported.
    chain = Object.assign(
      actionsPart.compileActionChain(actions.list, { onError: (failure) => failures.push(failure) }),
      { failures },
    );
    chain.bind({ job: actions.job, worker: actions.worker });
    chains.set(key, chain);
  }
  return chain;
}
