/**
 * Runs spread over runners (the `cloud` worker). A `gcs` run whose listing finds more
 * objects to read than `SLUICE_SHARD_OBJECTS` (1,000) reads that many itself and hands the
 * rest, as many at a time, to other runners: one part request each on `sluice-runs`.
 *
 * A counter document per run (`tenants/{tenant}/jobs/{job}/runs/{run}`) counts the parts
 * still being read (the run itself is one) and adds up their counts; whoever ends last
 * reports the run's one `job-run-ended`, with the totals and `parts` (runner.ts). The run's
 * id comes from its request, so a request Pub/Sub delivers again (its runner died) finds
 * the run it started and ends that run's share instead of starting another. Each document
 * carries `expires_at`, a day after its last change: one whose parts were lost (a restart of
 * the local stack drops Pub/Sub's messages) is deleted by Firestore's TTL policy, or by the
 * local stack's sweep.
 *
 * From the first part on the job's lease belongs to the parts (owner `parts:<run>`): the job's
 * next run never lists objects a part has yet to read, and a job has at most one set of
 * parts outstanding. Every participant renews that hold: the run while it reads its own
 * share, each part as soon as it is taken and while it reads, and the tick while a part
 * waits parked for a slot of its tenant (parked-runs.ts). The hold lasts the request
 * horizon (2 x budget + 60 s) past the last renewal, so parts lost for good let the job go
 * within that. The last part
 * to end gives the job back. A part that finds the hold gone (its run dropped, or the job
 * taken after the hold lapsed) reads nothing: another run may be reading its objects.
 *
 * @example
 *   const parts = new RunParts(deps, db, request, { id: runIdOf(request), owner, runsOnce, leaseMs }, threshold);
 *   // ... the run, with parts.control ...
 *   parts.stop();
 *   const end = await endShare(db, tenant, job, parts.runId, 'run', counts);
 */
import type { Firestore } from '@google-cloud/firestore';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { jobCollection, leasePath } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import type { ShardControl } from '../runner/types.ts';
import { handLease } from '../scheduled/lease.ts';
import { CLAIM_MS, parkInBatch } from './parked-runs.ts';
import { keepHolding, partsHoldMs, partsOwner, RUN_DOCUMENT_TTL_MS } from './parts-hold.ts';
import { publishRunRequests } from './run-channel.ts';

/** What the run keeps for its last part, besides the counts. */
export interface RunFacts {
  /** A job without a trigger: `stopped` after the run rather than `idle`. */
  runsOnce: boolean;
  /** When the job is due next, should the run's rest be given up (stalls.ts). */
  dueIfGivenUp: number | null;
}

export class RunParts {
  private requested = 0;
  private stopHolding: (() => void) | undefined;
  readonly control: ShardControl;

  constructor(
    private readonly deps: AppDeps,
    private readonly db: Firestore,
    private readonly request: RunRequest,
    private readonly run: {
      /** runIdOf(request). */
      id: string;
      /** Who holds the job's lease while the run reads (tick.ts). */
      owner: string;
      leaseMs: number;
      facts: () => Promise<RunFacts>;
    },
    threshold: number,
  ) {
    this.control = { threshold, request: (objects) => this.handOver(objects) };
  }

  /** Parts requested so far. */
  get count(): number {
    return this.requested;
  }

  get runId(): string {
    return this.run.id;
  }

  /** The run's own share is over: the parts alone hold the job from now on. */
  stop(): void {
    this.stopHolding?.();
    this.stopHolding = undefined;
  }

  private async handOver(objects: Record<string, unknown>[]): Promise<void> {
    const { deps, db, request, run } = this;
    const { tenant, job } = request;
    const ref = runDoc(db, tenant, job, run.id);
    const index = this.requested;
    if (index === 0) {
      // The job goes to the parts before the first is requested: should this runner die now,
      // they still hold it, and the request delivered again finds their run.
      const handed = await handLease(db, leasePath(tenant, job), run.owner, {
        owner: partsOwner(run.id),
        untilMs: Date.now() + partsHoldMs(deps),
      });
      if (!handed)
        throw new Error('the run no longer holds its job (its lease lapsed): it hands nothing over');
    }
    const part: RunRequest = {
      tenant,
      job,
      version: request.version,
      requested_ms: Date.now(),
      reason: 'part',
      part: { run: run.id, index, objects },
    };
    // Counted in its run and parked in one write, then requested: it cannot end before its
    // run knows of it, and should this runner die before requesting it (or Pub/Sub refuse
    // it), the tick sends it from the park (parked-runs.ts) once its claim lapses.
    const batch = db.batch();
    if (index === 0) {
      const facts = await run.facts();
      batch.create(ref, {
        // The run itself counts as one until its own share ends, and this first part.
        pending: 2,
        parts: 1,
        started_ms: Date.now(),
        version: request.version,
        runs_once: facts.runsOnce,
        due_if_given_up: facts.dueIfGivenUp,
        stalls: request.stalls ?? 0,
        run_until_ms: Date.now() + run.leaseMs,
        expires_at: runExpiry(),
      });
    } else {
      const { FieldValue } = await import('@google-cloud/firestore');
      // Fails when the run was dropped meanwhile (its job undeployed): nothing more is handed over.
      batch.update(ref, {
        pending: FieldValue.increment(1),
        parts: FieldValue.increment(1),
        expires_at: runExpiry(),
      });
    }
    const parked = parkInBatch(db, batch, part, { claimedForMs: CLAIM_MS });
    const [committed] = await batch.commit();
    this.requested++;
    if (index === 0) {
      // While the run reads its own share it says so (a request delivered again waits for it)
      // and holds the job for its parts.
      this.stopHolding = keepHolding(deps, db, request, run.id, () =>
        ref.update({ run_until_ms: Date.now() + run.leaseMs }).then(() => {}),
      );
    }
    try {
      await publishRunRequests(await deps.clients.pubsub(), [part]);
    } catch (err) {
      // The next tick sends it; the run goes on handing over.
      await parked.unclaim().catch(() => {});
      deps.logger.warn({ err, job, run: run.id, part: index }, 'requesting a part failed; the tick will');
      return;
    }
    await parked.remove(committed!.writeTime).catch(() => {});
  }
}

/** What ending a share found: the run still has parts out, is over (`last`), or is gone. */
export type ShareEnd =
  | { kind: 'pending' }
  | { kind: 'gone' }
  | {
      kind: 'last';
      totals: Record<string, unknown>;
      facts: RunFacts;
      version: number | undefined;
      /** The run's own share was cut short (its budget, its runner died): its rest is to be read. */
      rest: boolean;
      /** Budget stops in a row without progress before the run (its request's `stalls`). */
      stalls: number;
      /** Why the run or a part failed, when one did (redacted). */
      error: string | undefined;
    };

/**
 * Adds the counts of one part (its index; the run itself is `run`) to its run's, once
 * however often that part ends (a request delivered again after its part was read), and
 * keeps `note` for the last; the last share deletes the document and gets the run's totals.
 * A read and a write on condition the document is still as read, again if another share
 * came first: not a transaction, whose locks a runner killed inside it would leave on the
 * document for a minute (adapters/conditional-write.ts).
 */
export async function endShare(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
  part: number | 'run',
  counts: Record<string, unknown>,
  note: { rest?: boolean; error?: string } = {},
): Promise<ShareEnd> {
  const ref = runDoc(db, tenant, job, runId);
  for (let attempt = 1; ; attempt++) {
    const snap = await ref.get();
    if (!snap.exists) return { kind: 'gone' };
    const ended = (snap.get('ended') as string[] | undefined) ?? [];
    if (ended.includes(String(part))) return { kind: 'pending' };
    const pending = (snap.get('pending') as number) - 1;
    const totals = addCounts((snap.get('totals') as Record<string, unknown>) ?? {}, counts);
    const precondition = { lastUpdateTime: snap.updateTime! };
    try {
      if (pending > 0) {
        await ref.update(
          {
            pending,
            totals,
            ended: [...ended, String(part)],
            expires_at: runExpiry(),
            ...(note.rest ? { rest: true } : {}),
            ...(note.error ? { error: note.error } : {}),
          },
          precondition,
        );
        return { kind: 'pending' };
      }
      await ref.delete(precondition);
    } catch (err) {
      // Another share (or the run's renewal) wrote first: read again, a moment later.
      if (!isConflict(err) || attempt >= END_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 50 * Math.min(attempt, 10)));
      continue;
    }
    const started = snap.get('started_ms') as number;
    return {
      kind: 'last',
      totals: { ...totals, parts: snap.get('parts') as number, duration_ms: Date.now() - started },
      facts: {
        runsOnce: snap.get('runs_once') === true,
        dueIfGivenUp: (snap.get('due_if_given_up') as number | null | undefined) ?? null,
      },
      version: snap.get('version') as number | undefined,
      rest: note.rest === true || snap.get('rest') === true,
      stalls: (snap.get('stalls') as number | undefined) ?? 0,
      error: note.error ?? (snap.get('error') as string | undefined),
    };
  }
}

/** Reads of a run's document before a part gives up ending (many parts of one run may end at once). */
const END_ATTEMPTS = 50;

/** NOT_FOUND, FAILED_PRECONDITION: the document changed (or went) since it was read. */
function isConflict(err: unknown): boolean {
  const code = (err as { code?: number } | undefined)?.code;
  return code === 5 || code === 9;
}

/** endShare's totals when that was the last share, else undefined. */
export async function endPart(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
  part: number | 'run',
  counts: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const end = await endShare(db, tenant, job, runId, part, counts);
  return end.kind === 'last' ? end.totals : undefined;
}

/**
 * What a request of a run (not a part) finds of a run with its id: none; its own share
 * ended (a delivery after the run handed its parts over); still read by a live runner; or
 * left by a runner that died, whose share the caller is to end.
 */
export async function priorRun(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
): Promise<'none' | 'ended' | 'running' | 'dead'> {
  const snap = await runDoc(db, tenant, job, runId).get();
  if (!snap.exists) return 'none';
  if (((snap.get('ended') as string[] | undefined) ?? []).includes('run')) return 'ended';
  return ((snap.get('run_until_ms') as number | undefined) ?? 0) > Date.now() ? 'running' : 'dead';
}

/** Whether part `index` of the run has ended already (its run goes on). */
export async function partEnded(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
  index: number,
): Promise<boolean> {
  const snap = await runDoc(db, tenant, job, runId).get();
  return ((snap.get('ended') as string[] | undefined) ?? []).includes(String(index));
}

/**
 * Whether the run's document still exists, whether its own share is still read by a live
 * runner, and the reason its run or a part failed, if one did.
 */
export async function runState(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
): Promise<{ exists: boolean; reading: boolean; error?: string }> {
  const snap = await runDoc(db, tenant, job, runId).get();
  const ended = ((snap.get('ended') as string[] | undefined) ?? []).includes('run');
  const error = snap.get('error') as string | undefined;
  return {
    exists: snap.exists,
    reading: snap.exists && !ended && ((snap.get('run_until_ms') as number | undefined) ?? 0) > Date.now(),
    ...(error ? { error } : {}),
  };
}

/** Keeps `fields` on the run's document, if it still exists (its parts go on). */
export async function noteRun(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
  fields: Record<string, unknown>,
): Promise<void> {
  await runDoc(db, tenant, job, runId)
    .update({ ...fields, expires_at: runExpiry() })
    .catch(() => {});
}

/** Deletes the run's document (its job is no longer deployed as the run knew it). */
export async function deleteRun(db: Firestore, tenant: string, job: string, runId: string): Promise<void> {
  await runDoc(db, tenant, job, runId).delete();
}

/** Whether a part of the run is being read now (its own lease, tick.ts, is live). */
export async function partsReading(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
): Promise<boolean> {
  const leases = await jobCollection(db, tenant, job, 'leases').get();
  const now = Date.now();
  return leases.docs.some(
    (lease) =>
      lease.id.startsWith(`part-${runId}-`) &&
      ((lease.get('expires_at_ms') as number | undefined) ?? 0) > now,
  );
}

/** Numbers add up (also within maps such as `skipped`), flags are true if any part's is. */
export function addCounts(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const sum: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const had = sum[key];
    if (typeof value === 'number') sum[key] = (typeof had === 'number' ? had : 0) + value;
    else if (typeof value === 'boolean') sum[key] = had === true || value;
    else if (value && typeof value === 'object' && !Array.isArray(value))
      sum[key] = addCounts((had as Record<string, unknown>) ?? {}, value as Record<string, unknown>);
    else if (had === undefined) sum[key] = value;
  }
  return sum;
}

function runExpiry(): Date {
  return new Date(Date.now() + RUN_DOCUMENT_TTL_MS);
}

function runDoc(db: Firestore, tenant: string, job: string, runId: string) {
  return jobCollection(db, tenant, job, 'runs').doc(runId);
}
