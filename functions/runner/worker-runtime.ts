/**
 * The worker runtime (`sluice worker run`, and the local stack's `local` worker):
 * loads the jobs deployed to this worker, runs each with the job runner, and keeps them
 * current. A message (context changed, deployment changed, variable changed) makes it
 * re-fetch its rendered jobs and restart exactly those whose rendered definition changed.
 * It sends heartbeats with each job's state, and when the control plane is unreachable it
 * backs off and catches up once it is back. Two refusals are not outages, and end it with
 * its jobs stopped (`WorkerEnded`): its credential refused (the worker was deleted or its
 * key rotated), or its heartbeat refused because another runtime took the worker over
 * (functions/worker-api/heartbeat.ts: one runtime per worker, the newest wins).
 *
 * @example
 *   await runWorker({ api: () => client, output: createPrintOutput(process.stdout), stores: fileStores(dir), signal, log });
 */

import { randomUUID } from 'node:crypto';
import {
  DEPLOYMENT_ERROR_MAX_CHARS,
  FINGERPRINT_KEYS_PER_REQUEST,
  HEARTBEAT_JOBS_PER_REQUEST,
  HEARTBEAT_PART_BYTES,
  REPORTS_PER_REQUEST,
  SECRET_REFS_PER_REQUEST,
} from '../../shared/api/worker-limits.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import type { JobDefinition } from '../../shared/job/schema.ts';
import { findRuntimeRefs, resolveRuntimeRefs } from '../../shared/runtime-refs.ts';
import type { DeploymentState } from '../jobs/store.ts';
import { excerptWithin } from './excerpt.ts';
import { type Redactor, secretRedactor } from './redact.ts';
import { runJob } from './runner.ts';
import { pause } from './sleep.ts';
import type { FingerprintStore, MessageSource, Output, RunReport, WatermarkStore } from './types.ts';

/** Fingerprints kept by the control plane (`/api/worker/fingerprints/...`), shared by every run of a job. */
export function apiFingerprints(api: () => Promise<WorkerApi>): FingerprintStore {
  return {
    async seen(job, keys) {
      const seen = new Set<string>();
      for (const part of chunks(keys, FINGERPRINT_KEYS_PER_REQUEST)) {
        const answer = await (await api()).post<{ seen: string[] }>('/api/worker/fingerprints/check', {
          body: { job, keys: part },
        });
        for (const key of answer.seen) seen.add(key);
      }
      return seen;
    },
    async commit(job, keys, maxAgeMs) {
      for (const part of chunks(keys, FINGERPRINT_KEYS_PER_REQUEST))
        await (await api()).post('/api/worker/fingerprints/commit', {
          body: { job, keys: part, max_age: `${Math.ceil(maxAgeMs / 1000)}s` },
        });
    },
  };
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export interface WorkerApi {
  get<T>(path: string, options?: { query?: Record<string, string>; signal?: AbortSignal }): Promise<T>;
  post<T>(path: string, options?: { body?: unknown; signal?: AbortSignal }): Promise<T>;
}

export interface WorkerOptions {
  /** An API client with a current worker token (called before each request, so it may refresh the token). */
  api: () => Promise<WorkerApi>;
  worker: string;
  /** Where `print` outputs write. */
  output: Output;
  /** The data folder: `file` outputs of deployed jobs write only below it (none: they may not write). */
  dataDir?: string;
  stores: { fingerprints: FingerprintStore; watermarks: WatermarkStore };
  signal: AbortSignal;
  log: (line: string) => void;
  heartbeatMs?: number;
  /** Long-poll wait for messages. */
  waitSeconds?: number;
  /** The API's error code of a failed request (`unauthenticated`, `conflict`, ...), if it has one. */
  apiCodeOf?: (err: unknown) => string | undefined;
  /** Run reports kept for the control plane while it cannot take them (default 5,000); later ones are counted, not kept. */
  maxQueuedReports?: number;
}

/** Why a runtime ended on its own, its jobs stopped. */
export class WorkerEnded extends Error {
  constructor(
    /** `revoked`: its credential was refused; `replaced`: another runtime took its worker over. */
    readonly reason: 'revoked' | 'replaced',
    override readonly cause: unknown,
  ) {
    super(`${reason}: ${(cause as Error).message}`);
    this.name = 'WorkerEnded';
  }
}

interface RunningJob {
  fingerprint: string;
  version: number;
  controller: AbortController;
  state: DeploymentState;
  error?: string;
}

interface DeployedJob {
  name: string;
  version: number;
  definition: JobDefinition | null;
  error?: string;
}

/** Reports that other jobs' message triggers wait for: sent within PROMPT_FLUSH_MS, not with the next heartbeat. */
const PROMPT_REPORTS = new Set(['job-run-started', 'job-run-ended', 'run-job-failure', 'job-errors']);
const PROMPT_FLUSH_MS = 100;
/** API codes that refuse a batch of reports for what it holds: sending it again cannot help. */
const REFUSED_FOR_GOOD = new Set(['invalid_request', 'payload_too_large']);
/** How long a stopping runtime waits to report its jobs stopped. */
const FINAL_HEARTBEAT_MS = 2_000;

const REFRESH_TYPES = new Set([
  'context-changed',
  'rerender-deployment',
  'deployed-job-removed',
  'job-deployed',
  'update-variable',
  // A secret changed or was deleted: jobs using it restart with its value, or stop.
  'job-credentials-invalidated',
]);

export async function runWorker(options: WorkerOptions): Promise<void> {
  const jobs = new Map<string, RunningJob>();
  const listeners = new Set<(message: SluiceEvent) => void>();
  const messages: MessageSource = {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  /** Set when the jobs deployed here must be read again before the next long poll. */
  let needSync = true;
  let poll: AbortController | undefined;
  /** Has the main loop read the jobs deployed here at once, cutting its long poll short. */
  const resync = () => {
    needSync = true;
    poll?.abort();
  };
  // Run reports go to the local log at once and to the control plane's event log with each
  // heartbeat; a run's start and end go within a moment, since other jobs' message triggers
  // may wait for them (job chaining).
  let outgoing: { type: string; job: string; payload: Record<string, unknown> }[] = [];
  const maxQueued = options.maxQueuedReports ?? 5_000;
  /** Reports not kept, by job: the event log is told how many once the queue has drained. */
  const unqueued = new Map<string, number>();
  let promptFlush: ReturnType<typeof setTimeout> | undefined;
  const report = (job: string, redact: Redactor) => (raw: RunReport) => {
    const r = redact(raw);
    options.log(`${job}: ${r.type} ${JSON.stringify(r.payload)}`);
    if (outgoing.length < maxQueued) outgoing.push({ type: r.type, job, payload: r.payload });
    else unqueued.set(job, (unqueued.get(job) ?? 0) + 1);
    if (PROMPT_REPORTS.has(r.type) && !promptFlush) {
      promptFlush = setTimeout(() => {
        promptFlush = undefined;
        flushReports().catch((err: Error) => options.log(`reporting run events failed: ${err.message}`));
      }, PROMPT_FLUSH_MS);
    }
  };
  /** Set when the runtime has stopped: nothing is sent after. */
  let finished = false;
  let flushing: Promise<void> = Promise.resolve();
  /** One flush at a time, so a prompt flush and a heartbeat's never send a report twice. */
  const flushReports = () => {
    flushing = flushing
      .catch(() => {})
      .then(async () => {
        // A heartbeat answered after the runtime stopped sends nothing more.
        if (finished) return;
        // The control plane refuses (403) a whole batch that reports a job no longer deployed here.
        outgoing = outgoing.filter((r) => jobs.has(r.job));
        while (outgoing.length) await sendReports(Math.min(outgoing.length, REPORTS_PER_REQUEST));
        // Caught up: say what the event log is missing, where the reports were (this worker's log).
        for (const [job, dropped] of unqueued)
          if (jobs.has(job))
            outgoing.push({
              type: 'job-errors',
              job,
              payload: {
                reason: 'reports-dropped',
                dropped,
                message: `${dropped} run reports were not kept while the control plane could not take them (a worker keeps ${maxQueued}); this worker's log has them`,
              },
            });
        unqueued.clear();
        while (outgoing.length) await sendReports(Math.min(outgoing.length, REPORTS_PER_REQUEST));
      });
    return flushing;
  };
  /**
   * Sends the first `count` reports and takes them off the queue. A batch the control plane
   * refuses as malformed or too large will never be taken, and would hold back every report
   * after it: it is halved until the refused reports stand alone, which are logged and
   * dropped. (A newer worker meeting an older control plane is how this happens.) Other
   * failures leave the reports queued for the next flush.
   */
  const sendReports = async (count: number): Promise<void> => {
    const batch = outgoing.slice(0, count);
    try {
      await (await options.api()).post('/api/worker/events', { body: { events: batch } });
    } catch (err) {
      const code = options.apiCodeOf?.(err);
      // A job undeployed while the message saying so never came (403 names it): stop it
      // and let its reports go, rather than send the refused batch with every heartbeat.
      if (code === 'forbidden') resync();
      if (!REFUSED_FOR_GOOD.has(code ?? '')) throw err;
      if (count > 1) {
        const half = Math.ceil(count / 2);
        await sendReports(half);
        await sendReports(count - half);
        return;
      }
      options.log(
        `${batch[0]!.job}: the control plane refused its ${batch[0]!.type} report, which is dropped: ${(err as Error).message}`,
      );
    }
    outgoing = outgoing.slice(count);
  };

  const start = (
    deployed: DeployedJob & { definition: JobDefinition },
    fingerprint: string,
    redact: Redactor,
  ) => {
    const controller = new AbortController();
    const running: RunningJob = { fingerprint, version: deployed.version, controller, state: 'running' };
    jobs.set(deployed.name, running);
    options.log(`${deployed.name}: starting version ${deployed.version}`);
    runJob(deployed.definition, {
      worker: options.worker,
      output: options.output,
      stored: true,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...options.stores,
      signal: AbortSignal.any([controller.signal, options.signal]),
      report: report(deployed.name, redact),
      messages,
    }).then(
      () => {
        // Its input ended; not a run cut short by a restart or by this runtime stopping.
        if (!controller.signal.aborted && !options.signal.aborted) running.state = 'stopped';
      },
      (err: Error) => {
        running.state = 'failed';
        running.error = redact(err.message);
        options.log(`${deployed.name}: failed: ${running.error}`);
      },
    );
  };

  /**
   * Brings running jobs in line with what the control plane has deployed here. Returns the
   * first failure of a job whose run-time values could not be fetched (the others are in
   * line): that job is tried again on its own schedule, while messages keep coming.
   */
  const sync = async (): Promise<{ job: string; err: Error } | undefined> => {
    const deployed = await (await options.api()).get<DeployedJob[]>('/api/worker/jobs');
    const names = new Set(deployed.map((d) => d.name));
    for (const [name, running] of jobs) {
      if (!names.has(name)) {
        running.controller.abort();
        jobs.delete(name);
        options.log(`${name}: removed from this worker`);
      }
    }
    let transient: { job: string; err: Error } | undefined;
    for (const job of deployed) {
      const current = jobs.get(job.name);
      /** A job this worker cannot run: stop what runs and report the reason in heartbeats. */
      const cannotRun = (error: string) => {
        current?.controller.abort();
        jobs.set(job.name, {
          fingerprint: '',
          version: job.version,
          controller: new AbortController(),
          state: 'failed',
          error,
        });
        options.log(`${job.name}: cannot run: ${error}`);
      };
      if (!job.definition) {
        cannotRun(job.error ?? 'does not render');
        continue;
      }
      let resolved: Awaited<ReturnType<typeof resolveRefs>>;
      try {
        resolved = await resolveRefs(job.name, job.definition);
      } catch (err) {
        // The control plane failed for this job only: bring the others in line, then retry.
        transient ??= { job: job.name, err: err as Error };
        continue;
      }
      if (!resolved.ok) {
        cannotRun(resolved.error);
        continue;
      }
      // Compared in memory only: the fingerprint may hold secret values and is never sent or logged.
      const fingerprint = JSON.stringify(resolved.definition);
      if (current?.fingerprint === fingerprint) continue;
      current?.controller.abort();
      start({ ...job, definition: resolved.definition }, fingerprint, resolved.redact);
    }
    return transient;
  };

  /** Fills in `${secret|...}` (from the control plane, for this job only) and `${dyn|...||fallback}`. */
  const resolveRefs = async (
    name: string,
    definition: JobDefinition,
  ): Promise<{ ok: true; definition: JobDefinition; redact: Redactor } | { ok: false; error: string }> => {
    const refs = findRuntimeRefs(definition);
    const secrets: Record<string, string> = {};
    for (const part of chunks(refs.secrets, SECRET_REFS_PER_REQUEST)) {
      const answer = await (await options.api()).post<{ values: Record<string, string> }>(
        '/api/worker/secrets/resolve',
        { body: { job: name, refs: part } },
      );
      Object.assign(secrets, answer.values);
    }
    // Only this job's variables: the control plane gives a worker only what its jobs reference.
    const variables = refs.variables.length
      ? (
          await (
            await options.api()
          ).get<{ variables: Record<string, string> }>('/api/worker/variables', {
            query: { job: name },
          })
        ).variables
      : {};
    const result = resolveRuntimeRefs(definition, { secrets, variables });
    return result.ok
      ? { ok: true, definition: result.value, redact: secretRedactor(secrets) }
      : { ok: false, error: `missing ${result.missing.join(', ')}` };
  };

  // This runtime's name: its first heartbeat claims the worker, later ones must still hold it.
  // Undefined against a control plane older than sessions (it refuses the field): then the
  // contract's heartbeat alone, as before.
  let session: { id: string; claim: boolean } | undefined = { id: randomUUID(), claim: true };
  const beat = async (signal?: AbortSignal) => {
    const states = [...jobs].map(([name, j]) => ({
      name,
      state: j.state,
      // Cut to what a heartbeat takes: one long error must not have every heartbeat refused.
      ...(j.error ? { error: excerptWithin(j.error, DEPLOYMENT_ERROR_MAX_CHARS) } : {}),
    }));
    const send = async (part: typeof states) =>
      (await options.api()).post('/api/worker/heartbeat', {
        body: { jobs: part, ...(session ? { session: { ...session } } : {}) },
        ...(signal ? { signal } : {}),
      });
    try {
      // A worker with more jobs than one heartbeat takes sends its states in parts.
      for (const part of heartbeatParts(states))
        await send(part).catch(async (err) => {
          if (!session || options.apiCodeOf?.(err) !== 'invalid_request' || !/session/.test(String(err)))
            throw err;
          options.log(
            'the control plane takes no heartbeat sessions: two runtimes of this worker would both run',
          );
          session = undefined;
          await send(part);
        });
    } catch (err) {
      throw options.apiCodeOf?.(err) === 'conflict' ? new WorkerEnded('replaced', err) : err;
    }
    if (session) session.claim = false;
    await flushReports();
  };
  /**
   * One heartbeat at a time, in order: overlapping ones contended for the same documents (the
   * Firestore emulator held each up to its lock timeout, and a deploy waiting on them failed),
   * and a slow one landing after a newer one would record older states. One asked for while
   * another is on its way goes right after it, with the states of then; asks meanwhile share it.
   */
  let beating: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const heartbeat = (signal?: AbortSignal): Promise<void> => {
    if (!beating) {
      beating = beat(signal).finally(() => {
        beating = undefined;
      });
      return beating;
    }
    next ??= beating
      .catch(() => {})
      .then(() => {
        next = undefined;
        // Not once the runtime has stopped, or past the time its caller gave it.
        if (finished || signal?.aborted) return;
        return heartbeat(signal);
      });
    return next;
  };

  // Ends the loop (and its long poll) at once: stopped, or the credential was refused.
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  options.signal.addEventListener('abort', stop, { once: true });
  if (options.signal.aborted) stop();
  let ended: WorkerEnded | undefined;
  const refused = (err: unknown) => {
    const end =
      err instanceof WorkerEnded
        ? err
        : options.apiCodeOf?.(err) === 'unauthenticated'
          ? new WorkerEnded('revoked', err)
          : undefined;
    if (!end) return false;
    ended ??= end;
    stop();
    return true;
  };
  const heartbeats = setInterval(
    () =>
      void heartbeat().catch((err: Error) => {
        if (!refused(err)) options.log(`heartbeat failed: ${err.message}`);
      }),
    heartbeatMs,
  );
  let backoffMs = 1_000;
  /** A job's values could not be fetched: when to read the jobs again, and the next wait. */
  let jobRetryAt: number | undefined;
  let jobBackoffMs = 1_000;
  try {
    while (!stopping.signal.aborted) {
      try {
        if (jobRetryAt !== undefined && Date.now() >= jobRetryAt) needSync = true;
        if (needSync) {
          // Cleared first: a resync asked for while this one runs is not lost.
          needSync = false;
          jobRetryAt = undefined;
          const failed = await sync();
          if (failed) {
            options.log(
              `${failed.job}: its secrets or variables could not be fetched (${failed.err.message}); trying again in ${Math.round(jobBackoffMs / 1000)} s`,
            );
            jobRetryAt = Date.now() + jobBackoffMs;
            jobBackoffMs = Math.min(jobBackoffMs * 2, 30_000);
          } else jobBackoffMs = 1_000;
          await heartbeat();
        }
        // Back in time to try a failed job again.
        const waitSeconds = Math.max(
          1,
          Math.min(
            options.waitSeconds ?? 20,
            jobRetryAt === undefined ? Number.POSITIVE_INFINITY : Math.ceil((jobRetryAt - Date.now()) / 1000),
          ),
        );
        poll = new AbortController();
        const { messages: received } = await (await options.api()).get<{
          messages: (SluiceEvent & { ack_id: string })[];
        }>('/api/worker/messages', {
          query: { wait: `${waitSeconds}s` },
          signal: AbortSignal.any([stopping.signal, poll.signal]),
        });
        if (received.length) {
          if (received.some((m) => REFRESH_TYPES.has(m.type))) needSync = true;
          // Message-triggered inputs see every message; their own filters pick.
          for (const { ack_id: _, ...message } of received)
            for (const listener of listeners) listener(message);
          await (await options.api()).post('/api/worker/messages/ack', {
            body: { ack_ids: received.map((m) => m.ack_id) },
          });
        }
        backoffMs = 1_000;
      } catch (err) {
        if (refused(err) || stopping.signal.aborted) break;
        // Cut short to read the jobs again (resync), not failing.
        if (poll?.signal.aborted && needSync) continue;
        options.log(
          `control plane unreachable or failing (${(err as Error).message}); retrying in ${Math.round(backoffMs / 1000)} s`,
        );
        await pause(backoffMs + Math.random() * 250, stopping.signal);
        backoffMs = Math.min(backoffMs * 2, 30_000);
        needSync = true; // catch up on anything missed while away
      }
    }
  } finally {
    options.signal.removeEventListener('abort', stop);
    clearInterval(heartbeats);
    clearTimeout(promptFlush);
    for (const running of jobs.values()) running.controller.abort();
    // Not when it never reported (its claim would take the worker from another runtime).
    if (!ended && !session?.claim) {
      // Stopped (Ctrl-C, SIGTERM): say its jobs no longer run, rather than leave them
      // `running` until the offline sweep; briefly, as the control plane may be what is gone.
      for (const running of jobs.values()) if (running.state === 'running') running.state = 'pending';
      const signal = AbortSignal.timeout(FINAL_HEARTBEAT_MS);
      // Not past its time behind a heartbeat still on its way either.
      await Promise.race([heartbeat(signal), abortedBy(signal)]).catch(() => {});
    }
    finished = true;
    await options.output.close();
  }
  if (ended) throw ended;
}

/**
 * A heartbeat's job states in parts the API takes: at most HEARTBEAT_JOBS_PER_REQUEST states,
 * and about half the body limit (a thousand failed jobs' errors of 2,000 characters would be
 * twice it). Always one part, empty when the worker has no jobs.
 */
function heartbeatParts<T>(states: T[]): T[][] {
  const parts: T[][] = [[]];
  let bytes = 0;
  for (const state of states) {
    const size = JSON.stringify(state).length + 1;
    const last = parts.at(-1)!;
    if (last.length && (last.length >= HEARTBEAT_JOBS_PER_REQUEST || bytes + size > HEARTBEAT_PART_BYTES)) {
      parts.push([state]);
      bytes = size;
    } else {
      last.push(state);
      bytes += size;
    }
  }
  return parts;
}

function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}
