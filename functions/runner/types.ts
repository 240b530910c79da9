/**
 * The job runner's component model (after Vector: sources and sinks as peers).
 * An `Input` produces batches of events for one run; an `Output` delivers them.
 * Triggers, windows, retries of whole runs, fingerprints and high-watermarks are the
 * runner's business, so that every input gets them alike and adding an input touches
 * one folder: `functions/runner/inputs/<kind>/`, `functions/runner/outputs/<kind>/`.
 *
 * The same runner serves `sluice job run`, `sluice worker run`, the local stack's
 * `local` worker and the scheduled Cloud Function (the `cloud` worker).
 */

import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import type { ActionChain } from './actions/chain.ts';

/** One event flowing through a job: a JSON object. */
export type RunEvent = Record<string, unknown>;

/**
 * Events already serialized: one JSON object per line, each line ending in `\n`, as
 * UTF-8 bytes. An input that reads its events as JSON text (NDJSON lines) hands them on
 * as bytes when the output writes JSON text anyway (`print`): parsing a line only to
 * serialize it again is the most expensive step of a `gcs` → `print` job.
 */
export interface JsonLines {
  /** The lines, in order, in one or more buffers (each holding whole lines). */
  chunks: Buffer[];
  /** Events (lines) in `chunks`. */
  count: number;
  /**
   * For an output done with the chunks' memory (written, or copied): call once, after which
   * the chunks must not be read again; their buffers are reused (a read thread's). An output
   * that keeps the chunks, or cannot tell when it is done, never calls it.
   */
  release?: () => void;
}

/** The output's `writeJsonLines`, bound, for `RunContext.deliverJsonLines`; undefined if it has none. */
export function jsonLinesTo(
  output: Output,
): ((lines: JsonLines, unit?: DeliveryUnit) => Promise<void>) | undefined {
  return output.writeJsonLines ? (lines, unit) => output.writeJsonLines!(lines, unit) : undefined;
}

/**
 * The source a batch of events was read from (a `gcs` object and its generation). An
 * output that names what it writes after its source (`gcs` with `{source}`) sets
 * `perUnit`; the input then hands it each unit's events apart, in order.
 */
export interface DeliveryUnit {
  /** Unique per source version, e.g. `gs://bucket/name#generation` (the fingerprint key). */
  key: string;
  name: string;
  generation: string;
}

/** What an output counts; reported per run as `job-metrics` (`output: <kind>`). */
export interface OutputMetrics {
  events: number;
  bytes: number;
  batches: number;
  retries: number;
  failures: number;
}

export function newOutputMetrics(): OutputMetrics {
  return { events: 0, bytes: 0, batches: 0, retries: 0, failures: 0 };
}

const reportedErrors = new WeakSet<object>();

/**
 * Marks an error an input or an output has already reported as `job-errors` (with more
 * detail than its message), so that the runner, which reports a failed run's error, and an
 * input that an output's failure reaches (a rejected `deliver`), do not say it again.
 */
export function markReported<T>(err: T): T {
  if (typeof err === 'object' && err !== null) reportedErrors.add(err);
  return err;
}

export function wasReported(err: unknown): boolean {
  return typeof err === 'object' && err !== null && reportedErrors.has(err);
}

/** The time range a triggered run covers when the trigger has a `window`. */
export interface RunWindow {
  start: Date;
  end: Date;
}

/** Telemetry a run reports (becomes an event of CONTRACT section 5, e.g. `job-errors`). */
export interface RunReport {
  type: string;
  payload: Record<string, unknown>;
}

/**
 * Remembers what was already read, per job. A fingerprint key is input-defined
 * (for gcs: bucket, object name and generation). Backed by a file for `sluice job run`,
 * by Firestore for the cloud worker, by the worker API for external workers.
 */
export interface FingerprintStore {
  /** Returns the subset of `keys` already committed and not expired. One round trip per call. */
  seen(job: string, keys: string[]): Promise<Set<string>>;
  /** Records keys after every event they produced was delivered. */
  commit(job: string, keys: string[], maxAgeMs: number): Promise<void>;
  /**
   * Optional: gets the store ready (clients, connections) while the input lists its
   * first page, so the first `seen` does not pay for it. Failures are left to `seen`.
   */
  prepare?(job: string): Promise<void>;
}

/** Named high-watermarks per job (RFC 3339 strings), e.g. the end of the last delivered window. */
export interface WatermarkStore {
  get(job: string, name: string): Promise<string | undefined>;
  set(job: string, name: string, value: string): Promise<void>;
}

export interface RunContext {
  job: string;
  worker: string;
  /** Aborted on shutdown or when the job is redeployed; inputs stop promptly and cleanly. */
  signal: AbortSignal;
  /**
   * A run with a time budget (the `cloud` worker): `signal` is aborted a while before the
   * run's `signal`. An input that reads in units (objects) then starts no new one, delivers
   * and commits what it read, says `leftUndone()` if anything is left, and returns; the run's
   * rest is requested again and carries on from there. (Cut at its budget, a run kept
   * nothing it had not committed, and its rest started over, for ever.)
   */
  wrapUp?: { signal: AbortSignal; leftUndone(): void };
  window?: RunWindow;
  /**
   * Set when the output writes events as JSON text. An input may then deliver JSON lines
   * here instead of event objects to `deliver`; a run uses one or the other, never both,
   * so events keep their order. Same contract as `deliver` otherwise.
   */
  deliverJsonLines?: (lines: JsonLines, unit?: DeliveryUnit) => Promise<void>;
  /**
   * Resolves once the output has acknowledged every event delivered so far (flushed,
   * and accepted by the bucket, topic or endpoint); with `units`, at least every event of
   * those units, which are complete. An input calls it before it commits progress
   * (fingerprints, watermarks): a crash between the two repeats events, never loses them.
   */
  acknowledge?: (units?: DeliveryUnit[]) => Promise<void>;
  /** Set when the output wants each delivery to hold one unit's events (see DeliveryUnit). */
  perUnit?: boolean;
  /**
   * The job's actions, for an input that applies them itself to the JSON lines it hands to
   * `deliverJsonLines` (`Input.appliesActionsToJsonLines`). Events given to `deliver` are
   * still passed through them by the runner.
   */
  actions?: ActionChain;
  /** Set on the `cloud` worker, where a run may hand objects to other runners (see ShardControl). */
  shards?: ShardControl;
  fingerprints: FingerprintStore;
  watermarks: WatermarkStore;
  report(report: RunReport): void;
}

/**
 * How a run spreads a large listing over runners (the `cloud` worker, functions/runs/):
 * a run that finds more than `threshold` objects to read reads that many itself and hands
 * the rest, `threshold` at a time, to `request`; other runners read those parts at once,
 * and the job's next run waits until they have. A run given a `part` reads exactly those
 * objects.
 */
export interface ShardControl {
  threshold: number;
  /** Largest part, as JSON (default PART_MAX_BYTES of shared/runs/part-limits.ts). */
  maxPartBytes?: number;
  /** Hands these objects (the input's own JSON description of each) to another runner. */
  request(part: Record<string, unknown>[]): Promise<void>;
  /** This run is a part: the objects to read. */
  part?: Record<string, unknown>[];
}

export interface Input {
  /**
   * Performs one run: reads, and hands events to `deliver` in batches. Resolves when
   * the run is complete. `deliver` resolves once the output has accepted the batch;
   * an input commits fingerprints only after that, never before. A run's `job-run-ended`
   * (the gcs input's own, or `withRunReports`) comes after `ctx.acknowledge()`: delivered.
   */
  run(ctx: RunContext, deliver: (events: RunEvent[], unit?: DeliveryUnit) => Promise<void>): Promise<void>;
  /**
   * Whether the input applies `ctx.actions` to the JSON lines it delivers, so that lines
   * can keep their fast path when a job has actions (the `gcs` input does).
   */
  readonly appliesActionsToJsonLines?: boolean;
}

/** Messages a worker receives, for `message`-triggered inputs. */
export interface MessageSource {
  /** Calls `listener` for every message until the returned function is called. */
  subscribe(listener: (message: SluiceEvent) => void): () => void;
}

/**
 * An output reports its own delivery failures, once, as `job-errors` with `output: <kind>`
 * (and its bucket, topic, URL or path), and rejects with that error marked (`markReported`).
 */
export interface Output {
  /**
   * Accepts a batch: resolves once the output has taken it (maybe only buffered), and
   * waits while the output is full, so a slow destination slows the input.
   */
  write(events: RunEvent[], unit?: DeliveryUnit): Promise<void>;
  /** Optional, for outputs that write JSON text: events serialized already (see JsonLines). */
  writeJsonLines?(lines: JsonLines, unit?: DeliveryUnit): Promise<void>;
  /**
   * Optional for outputs that acknowledge on `write` (print, discard): flushes what is
   * buffered and resolves once the destination has acknowledged it (see RunContext).
   * Rejects when a delivery failed; nothing may then be committed.
   */
  acknowledge?(units?: DeliveryUnit[]): Promise<void>;
  /** Deliveries should hold one unit's events each (the output names objects after their source). */
  readonly perUnit?: boolean;
  close(): Promise<void>;
}
