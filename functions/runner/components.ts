/**
 * The component registry: every input and output kind, and how to build it from its
 * rendered declaration. The job runner (`sluice job run`, `sluice worker run`), the
 * `cloud` worker and the scheduled tick all build through here, and the `satisfies`
 * clauses make a kind declared in `shared/job/schema.ts` but missing here a type error.
 *
 * @example
 *   const input = inputFor(definition, { egress });
 *   const { output, kind, metrics } = outputFor(definition, { print, report, signal, stored: false });
 */
import type { InputKind, JobDefinition, OutputKind } from '../../shared/job/schema.ts';
import { withActions } from './actions/with-actions.ts';
import type { EgressPolicy } from './egress/policy.ts';
import { createGcsInput, type GcsInputOptions } from './inputs/gcs/index.ts';
import { createHttpPollInput } from './inputs/http-poll/index.ts';
import { createDiscardOutput } from './outputs/discard/index.ts';
import { createFileOutput } from './outputs/file/index.ts';
import { createGcsOutput } from './outputs/gcs/index.ts';
import { createHttpPostOutput } from './outputs/http-post/index.ts';
import { createPubsubOutput } from './outputs/pubsub/index.ts';
import { withRunReports } from './run-reports.ts';
import {
  type Input,
  type JsonLines,
  markReported,
  newOutputMetrics,
  type Output,
  type OutputMetrics,
  type RunEvent,
  type RunReport,
  wasReported,
} from './types.ts';

export interface InputDeps {
  egress?: EgressPolicy;
  gcs?: GcsInputOptions;
}

export interface OutputDeps {
  /** Where a `print` output writes: the process's shared standard output. */
  print: Output;
  report: (report: RunReport) => void;
  signal?: AbortSignal;
  egress?: EgressPolicy;
  /** The job came from the control plane: its file paths are relative to `dataDir`. */
  stored?: boolean;
  /** The worker's data folder (`sluice worker run --data-dir`). */
  dataDir?: string;
}

type Config<Part extends 'input' | 'output', K extends string> = NonNullable<
  JobDefinition[Part][K & keyof JobDefinition[Part]]
>;

// gcs reports its own runs; http-poll gets the same run events through a wrapper.
const INPUTS = {
  gcs: (config, deps) => createGcsInput(config, deps.gcs),
  'http-poll': (config, deps) =>
    withRunReports(createHttpPollInput(config, deps.egress ? { egress: deps.egress } : {})),
} satisfies { [K in InputKind]: (config: Config<'input', K>, deps: InputDeps) => Input };

const OUTPUTS = {
  print: (_config, deps, metrics) => countingPrint(deps.print, metrics, deps),
  discard: (_config, _deps, metrics) => createDiscardOutput(metrics),
  gcs: (config, deps, metrics) => createGcsOutput(config, { report: deps.report, metrics }),
  pubsub: (config, deps, metrics) => createPubsubOutput(config, { report: deps.report, metrics }),
  'http-post': (config, deps, metrics) =>
    createHttpPostOutput(config, {
      report: deps.report,
      metrics,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.egress ? { egress: deps.egress } : {}),
    }),
  file: (config, deps, metrics) =>
    createFileOutput(
      config,
      { stored: deps.stored === true, ...(deps.dataDir ? { dataDir: deps.dataDir } : {}) },
      metrics,
      deps.report,
    ),
} satisfies {
  [K in OutputKind]: (config: Config<'output', K>, deps: OutputDeps, metrics: OutputMetrics) => Output;
};

/** The one kind a component map names (`input: { gcs: {...} }` → `gcs`). */
function kindOf<K extends string>(component: object, kinds: Record<K, unknown>): K | undefined {
  return (Object.keys(component) as K[]).find(
    (k) => Object.hasOwn(kinds, k) && (component as Record<string, unknown>)[k] !== undefined,
  );
}

export function inputFor(definition: JobDefinition, deps: InputDeps = {}): Input {
  const kind = kindOf(definition.input, INPUTS);
  if (!kind) throw new Error(`no input kind in job ${definition.name}`);
  const build = INPUTS[kind] as (config: unknown, deps: InputDeps) => Input;
  // The job's actions sit between input and output, whichever kinds they are.
  return withActions(build(definition.input[kind], deps), definition);
}

export interface BuiltOutput {
  kind: OutputKind;
  output: Output;
  metrics: OutputMetrics;
}

export function outputFor(definition: JobDefinition, deps: OutputDeps): BuiltOutput {
  const kind = kindOf(definition.output, OUTPUTS);
  if (!kind) throw new Error(`no output kind in job ${definition.name}`);
  const metrics = newOutputMetrics();
  const build = OUTPUTS[kind] as (config: unknown, deps: OutputDeps, metrics: OutputMetrics) => Output;
  return { kind, output: build(definition.output[kind], deps, metrics), metrics };
}

/**
 * The shared print output, counting this job's events and the bytes it writes of them;
 * closing is the owner's business.
 */
/**
 * The shared print output, counted for this job, and its failures reported as the job's
 * output's (`job-errors` with `output: print`), as every output reports its own; a run that
 * was stopped (its reader went away, `sluice job run … | head`) reports nothing.
 */
function countingPrint(
  print: Output,
  metrics: OutputMetrics,
  deps: Pick<OutputDeps, 'report' | 'signal'>,
): Output {
  const count = (events: number, bytes: number) => {
    metrics.batches++;
    metrics.events += events;
    metrics.bytes += bytes;
  };
  const reported = async (write: Promise<void>) => {
    try {
      await write;
    } catch (err) {
      if (!deps.signal?.aborted && !wasReported(err)) {
        metrics.failures++;
        deps.report({ type: 'job-errors', payload: { output: 'print', reason: (err as Error).message } });
        markReported(err);
      }
      throw err;
    }
  };
  const counted: Output = {
    async write(events, unit) {
      // Serialized here, once, as the print output would: what is counted is what is written.
      // A print output that takes only events (a test's) serializes them the same way.
      const lines = jsonLinesOf(events);
      await reported(print.writeJsonLines ? print.writeJsonLines(lines, unit) : print.write(events, unit));
      count(lines.count, byteLengthOf(lines));
    },
    async close() {},
  };
  if (print.writeJsonLines) {
    counted.writeJsonLines = async (lines, unit) => {
      // Measured before they are handed over: once written, `release` gives a read thread
      // its buffers back, and a chunk whose buffer went back has length 0.
      const bytes = byteLengthOf(lines);
      await reported(print.writeJsonLines!(lines, unit));
      count(lines.count, bytes);
    };
  }
  if (print.acknowledge) counted.acknowledge = (units) => print.acknowledge!(units);
  return counted;
}

/** Events as the print output writes them: one JSON object per line, as UTF-8 bytes. */
function jsonLinesOf(events: RunEvent[]): JsonLines {
  let text = '';
  for (const event of events) text += `${JSON.stringify(event)}\n`;
  return { chunks: [Buffer.from(text)], count: events.length };
}

function byteLengthOf(lines: JsonLines): number {
  let bytes = 0;
  for (const chunk of lines.chunks) bytes += chunk.length;
  return bytes;
}
