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

/** One event flowing through a job: a JSON object. */
export type RunEvent = Record<string, unknown>;

/**
 * The event's JSON text, when an input already has it: a JSON line read as is, with the
 * input's own fields spliced in. Outputs that write JSON use it instead of serializing
 * the event again (the most expensive step of a `gcs` → `print` job). Non-enumerable, so
 * it is invisible to `Object.keys`, `JSON.stringify` and comparisons; an input sets it
 * only on an event it will not change afterwards.
 */
export const EVENT_JSON: unique symbol = Symbol('sluice.event-json');

export function withEventJson(event: RunEvent, json: string): RunEvent {
  Object.defineProperty(event, EVENT_JSON, { value: json });
  return event;
}

/** The event as one line of JSON. */
export function eventJson(event: RunEvent): string {
  return (event as { [EVENT_JSON]?: string })[EVENT_JSON] ?? JSON.stringify(event);
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
  window?: RunWindow;
  fingerprints: FingerprintStore;
  watermarks: WatermarkStore;
  report(report: RunReport): void;
}

export interface Input {
  /**
   * Performs one run: reads, and hands events to `deliver` in batches. Resolves when
   * the run is complete. `deliver` resolves once the output has accepted the batch;
   * an input commits fingerprints only after that, never before.
   */
  run(ctx: RunContext, deliver: (events: RunEvent[]) => Promise<void>): Promise<void>;
}

/** Messages a worker receives, for `message`-triggered inputs. */
export interface MessageSource {
  /** Calls `listener` for every message until the returned function is called. */
  subscribe(listener: (message: SluiceEvent) => void): () => void;
}

export interface Output {
  write(events: RunEvent[]): Promise<void>;
  close(): Promise<void>;
}
