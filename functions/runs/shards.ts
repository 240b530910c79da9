/**
 * Runs spread over runners (the `cloud` worker). A `gcs` run whose listing finds more
 * objects to read than `SLUICE_SHARD_OBJECTS` (1,000) reads that many itself and hands the
 * rest, as many at a time, to other runners: one part request each on `sluice-runs`.
 *
 * A counter document per run (`tenants/{tenant}/jobs/{job}/runs/{run}`) counts the parts
 * still being read (the run itself is one) and adds up their counts; whoever ends last
 * reports the run's one `job-run-ended`, with the totals and `parts`. Until then the job's
 * lease stays with the parts (owner `parts:<run>`, up to the request horizon), so the job's
 * next run never lists objects a part has yet to read; the last part gives it back and
 * has the job looked at on the next tick.
 *
 * @example
 *   const parts = new RunParts(deps, db, { tenant, job, version }, threshold);
 *   // ... the run, with parts.control ...
 *   const totals = await endPart(db, tenant, job, parts.runId, 'run', counts);
 */
import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import { jobCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import type { ShardControl } from '../runner/types.ts';
import { publishRunRequests } from './run-channel.ts';

export class RunParts {
  readonly runId = randomUUID();
  private readonly startedMs = Date.now();
  private requested = 0;
  readonly control: ShardControl;

  constructor(
    private readonly deps: AppDeps,
    private readonly db: Firestore,
    private readonly job: { tenant: string; job: string; version: number },
    threshold: number,
  ) {
    this.control = { threshold, request: (objects) => this.request(objects) };
  }

  /** Parts requested so far. */
  get count(): number {
    return this.requested;
  }

  /** Who holds the job's lease while parts are read. */
  get leaseOwner(): string {
    return partsOwner(this.runId);
  }

  private async request(objects: Record<string, unknown>[]): Promise<void> {
    const index = this.requested++;
    const { FieldValue } = await import('@google-cloud/firestore');
    await runDoc(this.db, this.job.tenant, this.job.job, this.runId).set(
      {
        // The run itself counts as one until it ends.
        pending: FieldValue.increment(index === 0 ? 2 : 1),
        parts: FieldValue.increment(1),
        started_ms: this.startedMs,
      },
      { merge: true },
    );
    await publishRunRequests(await this.deps.clients.pubsub(), [
      {
        tenant: this.job.tenant,
        job: this.job.job,
        version: this.job.version,
        requested_ms: Date.now(),
        reason: 'part',
        part: { run: this.runId, index, objects },
      },
    ]);
  }
}

export function partsOwner(runId: string): string {
  return `parts:${runId}`;
}

/**
 * Adds the counts of one part (its index; the run itself is `run`) to its run's, once
 * however often that part ends (a request delivered again after its part was read);
 * returns the run's totals when that was the last, else undefined.
 */
export async function endPart(
  db: Firestore,
  tenant: string,
  job: string,
  runId: string,
  part: number | 'run',
  counts: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const ref = runDoc(db, tenant, job, runId);
  return db.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    const ended = (snap.get('ended') as string[] | undefined) ?? [];
    if (!snap.exists || ended.includes(String(part))) return undefined;
    const pending = (snap.get('pending') as number) - 1;
    const totals = addCounts((snap.get('totals') as Record<string, unknown>) ?? {}, counts);
    if (pending > 0) {
      tx.update(ref, { pending, totals, ended: [...ended, String(part)] });
      return undefined;
    }
    tx.delete(ref);
    const started = snap.get('started_ms') as number;
    return { ...totals, parts: snap.get('parts') as number, duration_ms: Date.now() - started };
  });
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

function runDoc(db: Firestore, tenant: string, job: string, runId: string) {
  return jobCollection(db, tenant, job, 'runs').doc(runId);
}
