/**
 * `sluice job run FILE`: runs a job definition in the foreground on this machine,
 * without deploying it (like `vector --config`). `print` output goes to standard output,
 * one JSON event per line; everything else to standard error. Exits when a trigger-less
 * input has finished; runs on for triggered ones until Ctrl-C.
 */

import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { BucketNotFoundError } from '../../functions/runner/inputs/gcs/list.ts';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { ContextMap } from '../../shared/context/map.ts';
import { renderJob } from '../../shared/context/render.ts';
import { resolveContext } from '../../shared/context/resolve.ts';
import type { ErrorDetail } from '../../shared/errors.ts';
import { containsReference, type ParseResult, parseJobYaml } from '../../shared/job/index.ts';
import { parseTemplate } from '../../shared/job/reference-syntax.ts';
import { resolveRuntimeRefs } from '../../shared/runtime-refs.ts';
import { CliError, EXIT } from '../exit-codes.ts';
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
      EXIT.error,
      parsed.errors.map((e) => placedLine(file, e)),
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
    // At the field of the file each is about: for a value a context key brought in, the
    // field that references the key (a missing key's message names it).
    throw new CliError(
      `${file} does not render`,
      EXIT.error,
      parsed.place(rendered.errors).map((e) => placedLine(file, e) + contextHint(e.message)),
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
  // A reader that went away (`sluice job run job.yaml | head`) ends the run quietly; any
  // other failure to write (a full disk) fails the run: its events were not written.
  const readerGone = (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') interrupt.stop();
  };
  streams.stdout.on('error', readerGone);
  try {
    await runJob(orderedByDefault(runtime.value), {
      worker,
      output: createPrintOutput(streams.stdout as never),
      ...fileStores(options.stateDir),
      signal: interrupt.signal,
      report: (r) => ctx.io.stderr(`${r.type} ${JSON.stringify(r.payload)}\n`),
    });
  } catch (err) {
    if (err instanceof BucketNotFoundError) throw bucketNotFound(file, parsed, err);
    throw new CliError(`job ${parsed.job.name} failed: ${(err as Error).message}`);
  } finally {
    interrupt.dispose();
    streams.stdout.removeListener('error', readerGone);
  }
}

/** `FILE:LINE:COLUMN: path: message`, as `sluice job validate` prints an error. */
function placedLine(file: string, e: ErrorDetail): string {
  return `${file}:${e.line ?? 1}:${e.column ?? 1}: ${e.path ? `${e.path}: ` : ''}${e.message}`;
}

/**
 * The listing of a `gcs` input's bucket answered 404: exit 4 (not found), at the field that
 * names the bucket (and the context key that brought the name in), with what to check next.
 */
function bucketNotFound(
  file: string,
  parsed: Extract<ParseResult, { ok: true }>,
  err: BucketNotFoundError,
): CliError {
  const written = (parsed.raw as { input?: { gcs?: Record<string, unknown> } }).input?.gcs?.['bucket-name'];
  const keys = typeof written === 'string' ? referencedKeys(written) : [];
  const from = keys.length ? ` (from context key ${keys.map((k) => `\`${k}\``).join(', ')})` : '';
  const [field] = parsed.place([
    { path: 'input.gcs.bucket-name', message: `bucket \`${err.bucket}\` not found${from}` },
  ]);
  // What the storage client read (client.ts): this process's environment.
  const emulator = process.env.STORAGE_EMULATOR_HOST;
  const next = emulator
    ? `Check the bucket name, and that the storage emulator at STORAGE_EMULATOR_HOST=${emulator} holds it (this run asked that emulator, not Cloud Storage).`
    : 'Check the bucket name: bucket names are global, so no project has this one (a bucket these credentials may not read answers 403, not 404). To read a bucket of the storage emulator, set STORAGE_EMULATOR_HOST.';
  return new CliError(
    `job ${parsed.job.name} failed: bucket \`${err.bucket}\` not found (the storage API answered 404 to listing it)`,
    EXIT.notFound,
    [placedLine(file, field!), next],
  );
}

/** The context keys a string of the job file references (`{{key}}`, `{{key.sub}}`: key). */
function referencedKeys(text: string): string[] {
  const parsed = text.includes('{{') ? parseTemplate(text) : undefined;
  if (!parsed?.ok) return [];
  return [...new Set(parsed.parts.flatMap((part) => ('ref' in part ? [part.ref[0]!] : [])))];
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
