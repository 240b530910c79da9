/**
 * Runs one rendered job definition: builds its input and output from their kinds, and
 * drives the input on its trigger until it finishes (no trigger) or `signal` aborts.
 * The same function serves `sluice job run`, `sluice worker run` and the local worker.
 *
 * @example
 *   await runJob(definition, { worker: 'local', output: createPrintOutput(process.stdout), ...fileStores('.sluice/state'), signal });
 */
import { type JobDefinition, triggerOf } from '../../shared/job/schema.ts';
import { createGcsInput } from './inputs/gcs/index.ts';
import { createHttpPollInput } from './inputs/http-poll/index.ts';
import { withRunReports } from './run-reports.ts';
import { runOnTrigger } from './triggers.ts';
import {
  type FingerprintStore,
  type Input,
  jsonLinesTo,
  type MessageSource,
  type Output,
  type RunReport,
  type WatermarkStore,
  wasReported,
} from './types.ts';

export interface RunOptions {
  worker: string;
  output: Output;
  fingerprints: FingerprintStore;
  watermarks: WatermarkStore;
  signal: AbortSignal;
  report?: (report: RunReport) => void;
  messages?: MessageSource;
}

export function inputFor(definition: JobDefinition): Input {
  if (definition.input.gcs) return createGcsInput(definition.input.gcs);
  if (definition.input['http-poll'])
    return withRunReports(createHttpPollInput(definition.input['http-poll']));
  throw new Error(`no input kind in job ${definition.name}`);
}

export async function runJob(definition: JobDefinition, options: RunOptions): Promise<void> {
  const input = inputFor(definition);
  const report = options.report ?? (() => {});
  const trigger = triggerOf(definition);
  const deliverJsonLines = jsonLinesTo(options.output);
  const reportError = (err: Error) => {
    if (!wasReported(err)) report({ type: 'job-errors', payload: { reason: err.message } });
  };
  try {
    await runOnTrigger(
      trigger,
      async (window) => {
        try {
          await input.run(
            {
              job: definition.name,
              worker: options.worker,
              signal: options.signal,
              fingerprints: options.fingerprints,
              watermarks: options.watermarks,
              report,
              ...(window ? { window } : {}),
              ...(deliverJsonLines ? { deliverJsonLines } : {}),
            },
            (batch) => options.output.write(batch),
          );
        } catch (err) {
          // A one-shot job fails here; a triggered one reports through onError and carries on.
          if (!trigger && !options.signal.aborted) reportError(err as Error);
          throw err;
        }
      },
      {
        job: definition.name,
        signal: options.signal,
        watermarks: options.watermarks,
        onError: reportError,
        ...(options.messages ? { messages: options.messages } : {}),
      },
    );
  } catch (err) {
    if (!options.signal.aborted) throw err;
  } finally {
    await options.output.close();
  }
}
