/**
 * Runs one rendered job definition: builds its input and output from their kinds, and
 * drives the input on its trigger until it finishes (no trigger) or `signal` aborts.
 * The same function serves `sluice job run`, `sluice worker run` and the local worker.
 *
 * @example
 *   await runJob(definition, { worker: 'local', output: createPrintOutput(process.stdout), ...fileStores('.sluice/state'), signal });
 */

import { type JobDefinition, triggerOf } from '../../shared/job/schema.ts';
import { reportFailure } from './answered-error.ts';
import { inputFor as componentInput, outputFor } from './components.ts';
import type { EgressPolicy } from './egress/policy.ts';
import { bindOutput } from './run-output.ts';
import { runOnTrigger } from './triggers.ts';
import type { FingerprintStore, Input, MessageSource, Output, RunReport, WatermarkStore } from './types.ts';

export interface RunOptions {
  worker: string;
  /** Where a `print` output writes (other kinds are built from the job). */
  output: Output;
  fingerprints: FingerprintStore;
  watermarks: WatermarkStore;
  signal: AbortSignal;
  report?: (report: RunReport) => void;
  messages?: MessageSource;
  /** Where the job may connect; default: this process's SLUICE_EGRESS_ALLOW, else loopback only. */
  egress?: EgressPolicy;
  /** The job came from the control plane (a deployed job): its `file` paths are relative to `dataDir`. */
  stored?: boolean;
  /** The worker's data folder (`sluice worker run --data-dir`). */
  dataDir?: string;
}

export function inputFor(definition: JobDefinition, options: { egress?: EgressPolicy } = {}): Input {
  return componentInput(definition, options);
}

export async function runJob(definition: JobDefinition, options: RunOptions): Promise<void> {
  const input = inputFor(definition, options.egress ? { egress: options.egress } : {});
  const report = options.report ?? (() => {});
  const trigger = triggerOf(definition);
  const built = outputFor(definition, {
    print: options.output,
    report,
    signal: options.signal,
    ...(options.egress ? { egress: options.egress } : {}),
    ...(options.stored ? { stored: true } : {}),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  const output = bindOutput(built, report);
  const reportError = (err: Error) => {
    reportFailure(report, err);
  };
  try {
    await runOnTrigger(
      trigger,
      async (window) => {
        let failed = true;
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
              ...output.context,
            },
            output.deliver,
          );
          failed = false;
        } catch (err) {
          // A one-shot job fails here; a triggered one reports through onError and carries on.
          if (!trigger && !options.signal.aborted) reportError(err as Error);
          throw err;
        } finally {
          // Before the trigger moves its watermark on: everything of the run acknowledged.
          await output.endRun({ failed: failed || options.signal.aborted });
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
    await built.output.close();
    await options.output.close();
  }
}
