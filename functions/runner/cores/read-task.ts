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
import type { Action } from '../../../shared/job/actions/schema.ts';
import {
  type ActionChain,
  type ActionFailure,
  type ActionStats,
  compileActionChain,
} from '../actions/chain.ts';
import { jsonLines, jsonLinesWithActions } from '../inputs/gcs/batches.ts';
import type { Preprocessor } from '../inputs/gcs/config.ts';
import { applySteps, expandSteps } from '../inputs/gcs/decompress.ts';
import type { ShapePlan } from '../inputs/gcs/fields.ts';
import type { ObjectMeta } from '../inputs/gcs/list.ts';
import { contentEvents, type PayloadOptions, type ProblemReporter } from '../inputs/gcs/payload.ts';
import type { JsonLines } from '../types.ts';

export interface ReadTask {
  meta: ObjectMeta;
  preprocessors: Preprocessor[];
  payload: PayloadOptions;
  shape: ShapePlan;
  /** The job's actions, applied where the lines are made, with the names they see. */
  actions?: { list: readonly Action[]; job: string; worker: string };
}

/** What a task's actions did while it made one batch. */
export interface ActionReport {
  stats: ActionStats;
  failures: ActionFailure[];
}

/**
 * Whether a task can go to another core: not parquet (its reader seeks in the stored
 * object, through the main thread's Storage client).
 */
export function readsOnAnyCore(task: Pick<ReadTask, 'meta' | 'preprocessors'>): boolean {
  return !expandSteps(task.preprocessors, task.meta.name).includes('parquet');
}

/**
 * The task's batches, each with what its actions did meanwhile (when it has actions).
 * Actions compile once per thread and list of actions (`chains`), not once per object.
 */
export async function* readTaskBatches(
  task: ReadTask,
  chunks: AsyncIterable<Buffer>,
  problem: ProblemReporter,
  chains: Map<string, ActionChain & { failures: ActionFailure[] }> = new Map(),
): AsyncGenerator<{ lines?: JsonLines; actions?: ActionReport }> {
  // Parquet never comes here (readsOnAnyCore): without a parquet step, it would be an error.
  const content = applySteps(chunks, task.meta, task.preprocessors, undefined);
  if (content.kind !== 'bytes') throw new Error('parquet objects are read on the main thread');
  const chain = task.actions && chainFor(task.actions, chains);
  const format = chain ? jsonLinesWithActions(chain) : jsonLines;
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
      compileActionChain(actions.list, { onError: (failure) => failures.push(failure) }),
      { failures },
    );
    chain.bind({ job: actions.job, worker: actions.worker });
    chains.set(key, chain);
  }
  return chain;
}
