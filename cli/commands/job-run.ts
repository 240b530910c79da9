/**
 * `sluice job run FILE`: runs a job definition in the foreground on this machine,
 * without deploying it (like `vector --config`). `print` output goes to standard output,
 * one JSON event per line; everything else to standard error. Exits when a trigger-less
 * input has finished; runs on for triggered ones until Ctrl-C.
 */

import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { ContextMap } from '../../shared/context/map.ts';
import { renderJob } from '../../shared/context/render.ts';
import { resolveContext } from '../../shared/context/resolve.ts';
import { containsReference, parseJobYaml } from '../../shared/job/index.ts';
import { resolveRuntimeRefs } from '../../shared/runtime-refs.ts';
import { CliError } from '../exit-codes.ts';
import type { CommandContext } from '../globals.ts';
import { untilInterrupted } from '../interrupt.ts';
import { parseAssignment } from './context.ts';

export interface JobRunOptions {
  context?: string[];
  worker?: string;
  stateDir: string;
}

export async function jobRunAction(
  ctx: CommandContext,
  file: string,
  options: JobRunOptions,
  streams: { stdout: NodeJS.WritableStream; signal?: AbortSignal } = { stdout: process.stdout },
): Promise<void> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new CliError(
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  // A file without a `{{...}}` reference renders to itself, and the saved level judges it as
  // the rendered one does; checked at the rendered level here, its check in renderJob below
  // finds that schema built and warm instead of building a second one (about 20 ms of every
  // run's start: render 16-37 ms -> 1-3 ms, 10 alternating runs).
  const parsed = parseJobYaml(bytes, { level: (raw) => (containsReference(raw) ? 'saved' : 'rendered') });
  if (!parsed.ok) {
    throw new CliError(
      `${file} is not a valid job`,
      1,
      parsed.errors.map((e) => `${file}:${e.line ?? 1}:${e.column ?? 1}: ${e.path}: ${e.message}`),
    );
  }
  const definition = parsed.raw as Record<string, unknown>;
  const overrides = Object.fromEntries(
    (options.context ?? []).map((arg) => parseAssignment(arg, ctx.io.stderr)),
  ) as ContextMap;
  const worker = options.worker ?? hostname();
  const { context } = resolveContext({
    job: parsed.job.name,
    worker,
    jobMap: overrides,
    workerMap: {},
    global: {},
    definition: (definition.context as ContextMap | undefined) ?? {},
  });
  const rendered = renderJob(definition, context);
  if (!rendered.ok) {
    throw new CliError(
      `${file} does not render`,
      1,
      rendered.errors.map((e) => `  ${e.path}: ${e.message}${contextHint(e.message)}`),
    );
  }
  // No control plane here: secrets cannot be had, variables only through their fallbacks.
  const runtime = resolveRuntimeRefs(rendered.definition, { secrets: {}, variables: {} });
  if (!runtime.ok) {
    throw new CliError(`${file} needs values only a deployed worker gets: ${runtime.missing.join(', ')}`, 1, [
      'Deploy the job to a worker, or give variables a fallback: ${dyn|NAME||value}.',
    ]);
  }
  const interrupt = untilInterrupted(streams.signal);
  // A reader that went away (`sluice job run job.yaml | head`) ends the run quietly.
  streams.stdout.on('error', interrupt.stop);
  try {
    await runJob(orderedByDefault(runtime.value), {
      worker,
      output: createPrintOutput(streams.stdout as never),
      ...fileStores(options.stateDir),
      signal: interrupt.signal,
      report: (r) => ctx.io.stderr(`${r.type} ${JSON.stringify(r.payload)}\n`),
    });
  } catch (err) {
    throw new CliError(`job ${parsed.job.name} failed: ${(err as Error).message}`);
  } finally {
    interrupt.dispose();
    streams.stdout.removeListener('error', interrupt.stop);
  }
}

/**
 * A person reading `sluice job run`'s output expects each object's events together and the
 * objects in the bucket's order, so a `gcs` input is `ordered` here unless the job says
 * `ordered: false` (workers keep the default, false: delivery order matters less there than
 * throughput). With the read threads it costs 5-15% (docs/inputs/gcs.md).
 */
export function orderedByDefault<T>(definition: T): T {
  const input = (definition as { input?: { gcs?: { ordered?: boolean } } }).input;
  if (!input?.gcs || input.gcs.ordered !== undefined) return definition;
  return { ...definition, input: { ...input, gcs: { ...input.gcs, ordered: true } } };
}

/**
 * The way to give a missing context key here, naming it; nothing for other render errors
 * (a value that was passed and makes the job invalid is fixed in the value, not by passing it).
 */
function contextHint(message: string): string {
  const key = MISSING_CONTEXT_KEY.exec(message)?.[1];
  return key === undefined ? '' : ` (pass it with --context ${key}=VALUE)`;
}

/** renderJob's message for a key no context layer holds (shared/context/render.ts). */
const MISSING_CONTEXT_KEY = /^missing context key `([^`]+)`$/;
