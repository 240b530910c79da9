/**
 * Run requests waiting for a slot of their tenant: a part of a run, or a run that object
 * notifications woke (neither is requested again by the tick). They wait here, in
 * Firestore (`tenants/{tenant}/parked-runs`), not in a runner: a runner that held such a
 * request while it waited kept one of the runner function's instances busy for up to a
 * budget, so one tenant's many parts could take every instance and other tenants' requests
 * were refused, and after five refusals dead-lettered as failed runs.
 *
 * A parked request goes back to the queue, oldest first, when a slot of its tenant is given
 * back (the runner that frees it releases one, `releaseParkedRun`) and at every tick for
 * the slots then free (`releaseParkedRuns`), which also renews the hold of parked parts on
 * their job (shards.ts) while they wait. A released request that finds the tenant at its
 * cap again is parked again with the time it first waited, so it keeps its place.
 *
 * A request is stored as gzip JSON (a part names up to PART_MAX_BYTES of objects; a
 * Firestore document holds at most 1 MiB): in its own document when it fits, else in
 * CHUNK_BYTES pieces in documents beside it (`{id}~1`, `{id}~2`, ...), written together.
 * Only the head document has `waiting_since_ms`, so only heads come back from the query
 * ordered by it. Releasing claims the head for CLAIM_MS before it publishes and deletes it:
 * a releaser that dies in between leaves it to be released again (a part delivered again
 * after it was read is not read again: runner.ts). The delete is
 * conditional on the claim's write: the request, once published, may already have parked
 * itself again under the same id.
 *
 * A part being handed over is parked too, claimed, in the same write that counts it in its
 * run (shards.ts `parkInBatch`), then published and cleared: should its runner die or the
 * publish fail, the tick requests it from here.
 *
 * @example
 *   await parkRun(db, request);                 // the tenant is at its cap
 *   await releaseParkedRun(deps, db, tenant);   // a slot of the tenant was given back
 *   await releaseParkedRuns(deps);              // the tick
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type {
  DocumentReference,
  DocumentSnapshot,
  Firestore,
  Timestamp,
  WriteBatch,
} from '@google-cloud/firestore';
import { type RunRequest, RunRequestSchema } from '../../shared/runs/run-request.ts';
import { isWriteConflict, writeIfUnchanged } from '../adapters/conditional-write.ts';
import { collectionGroup, tenantCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { holdJob, RUN_DOCUMENT_TTL_MS, runIdOf } from './parts-hold.ts';
import { publishRunRequests } from './run-channel.ts';
import { liveRunSlots } from './tenant-slots.ts';

/** The most bytes of a request one document holds (a document holds at most 1 MiB). */
export const CHUNK_BYTES = 900_000;
/** How long a releaser has to publish a request it claimed before another may. */
export const CLAIM_MS = 30_000;

/** Parks a request of a tenant at its cap; it keeps the time it first waited. */
export async function parkRun(db: Firestore, request: RunRequest, nowMs = Date.now()): Promise<void> {
  const batch = db.batch();
  parkInBatch(db, batch, request, { nowMs });
  await batch.commit();
}

/** A request parked by `parkInBatch`, once its batch is committed. */
export interface ParkedRun {
  /**
   * The request was published by whoever parked it: it leaves the park, unless it was parked
   * again since `committedAt` (the batch's commit time: every write of a batch has it).
   */
  remove(committedAt: Timestamp): Promise<void>;
  /** Publishing failed: the next tick may release it at once. */
  unclaim(): Promise<void>;
}

/**
 * Adds the writes that park `request` to `batch`, so that it is parked together with other
 * writes or not at all (a part with its count in its run: shards.ts). `claimedForMs`: it is
 * about to be published by the caller, and nobody else releases it for that long.
 */
export function parkInBatch(
  db: Firestore,
  batch: WriteBatch,
  request: RunRequest,
  { nowMs = Date.now(), claimedForMs = 0 }: { nowMs?: number; claimedForMs?: number } = {},
): ParkedRun {
  const parked: RunRequest = { ...request, waiting_since_ms: request.waiting_since_ms ?? nowMs };
  const packed = gzipSync(JSON.stringify(parked));
  const pieces = Math.max(1, Math.ceil(packed.length / CHUNK_BYTES));
  const piece = (i: number) => packed.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
  const parkedRuns = tenantCollection(db, request.tenant, 'parked-runs');
  const head = parkedRuns.doc(parkedId(request));
  const expires_at = new Date(nowMs + RUN_DOCUMENT_TTL_MS);
  batch.set(head, {
    job: request.job,
    // A part's run, whose hold on the job the tick renews while the part waits.
    ...(request.part ? { part_run: request.part.run } : {}),
    waiting_since_ms: parked.waiting_since_ms,
    claimed_until_ms: claimedForMs > 0 ? nowMs + claimedForMs : 0,
    pieces,
    data: piece(0),
    expires_at,
  });
  for (let i = 1; i < pieces; i++)
    batch.set(parkedRuns.doc(`${head.id}~${i}`), { data: piece(i), expires_at });
  return {
    remove: async (committedAt) => {
      await deleteIfUnchanged(db, head, committedAt, pieces);
    },
    unclaim: async () => {
      await head.update({ claimed_until_ms: 0 });
    },
  };
}

/** Releases the tenant's oldest parked request, if it has one; true if one was released. */
export async function releaseParkedRun(deps: AppDeps, db: Firestore, tenant: string): Promise<boolean> {
  return (await releaseOldest(deps, db, tenant, 1)) > 0;
}

/**
 * The tick's share: for each tenant with parked requests, releases as many as it has free
 * slots, and renews the hold of the parts that stay parked. Returns how many were released.
 */
export async function releaseParkedRuns(deps: AppDeps, nowMs = Date.now()): Promise<number> {
  const db = await deps.clients.firestore();
  // Heads only carry `waiting_since_ms`; pieces come back empty (no field is read of them).
  const parked = await collectionGroup(db, 'parked-runs').select('waiting_since_ms', 'job', 'part_run').get();
  const tenants = new Map<string, DocumentSnapshot[]>();
  for (const head of parked.docs) {
    if (head.get('waiting_since_ms') === undefined) continue;
    const tenant = head.ref.parent.parent!.id;
    tenants.set(tenant, [...(tenants.get(tenant) ?? []), head]);
  }
  let released = 0;
  for (const [tenant, heads] of tenants) {
    const live = await liveRunSlots(db, tenant, deps.config.tenantRunCap, nowMs);
    const free = Math.max(0, deps.config.tenantRunCap - live);
    released += await releaseOldest(deps, db, tenant, free);
    // Once per run, however many of its parts wait.
    const runs = new Map<string, { job: string; run: string }>();
    for (const head of heads) {
      const run = head.get('part_run') as string | undefined;
      const job = head.get('job') as string;
      if (run) runs.set(`${job}/${run}`, { job, run });
    }
    await Promise.all(
      [...runs.values()].map(({ job, run }) => holdJob(deps, db, { tenant, job }, run).catch(() => {})),
    );
  }
  return released;
}

/** Claims, publishes and deletes up to `count` of the tenant's oldest parked requests. */
async function releaseOldest(deps: AppDeps, db: Firestore, tenant: string, count: number): Promise<number> {
  if (count <= 0) return 0;
  const now = Date.now();
  // A few more than asked: some may be claimed by another releaser.
  const oldest = await tenantCollection(db, tenant, 'parked-runs')
    .orderBy('waiting_since_ms')
    .limit(count + 5)
    .get();
  let released = 0;
  for (const head of oldest.docs) {
    if (released >= count) break;
    if (((head.get('claimed_until_ms') as number | undefined) ?? 0) > now) continue;
    const claimed = await writeIfUnchanged(head.ref, head, { claimed_until_ms: now + CLAIM_MS });
    if (!claimed) continue;
    const request = await readParked(db, head).catch(() => undefined);
    // One that cannot be read (damaged, or of an older shape) goes: its run's hold lapses in time.
    if (request) await publishRunRequests(await deps.clients.pubsub(), [request]);
    // Unless, published, it was parked again meanwhile.
    await deleteIfUnchanged(db, head.ref, claimed.writeTime, (head.get('pieces') as number | undefined) ?? 1);
    if (request) released++;
  }
  return released;
}

async function readParked(db: Firestore, head: DocumentSnapshot): Promise<RunRequest> {
  const pieces = (head.get('pieces') as number | undefined) ?? 1;
  const rest =
    pieces > 1
      ? await db.getAll(
          ...Array.from({ length: pieces - 1 }, (_, i) => head.ref.parent.doc(`${head.id}~${i + 1}`)),
        )
      : [];
  const packed = Buffer.concat([
    head.get('data') as Buffer,
    ...rest.map((piece) => piece.get('data') as Buffer),
  ]);
  return RunRequestSchema.parse(JSON.parse(gunzipSync(packed).toString('utf8')));
}

/**
 * Deletes a parked request, head and pieces in one write, if its head is still as written
 * at `writtenAt`; false if it changed (parked again by the request itself, after publishing).
 */
async function deleteIfUnchanged(
  db: Firestore,
  head: DocumentReference,
  writtenAt: Timestamp,
  pieces: number,
): Promise<boolean> {
  const batch = db.batch();
  batch.delete(head, { lastUpdateTime: writtenAt });
  for (let i = 1; i < pieces; i++) batch.delete(head.parent.doc(`${head.id}~${i}`));
  try {
    await batch.commit();
    return true;
  } catch (err) {
    if (isWriteConflict(err)) return false;
    throw err;
  }
}

/** One document per request: a run by its id, a part by its run and index (job names have no `~`). */
function parkedId(request: RunRequest): string {
  return `${request.job}~${request.part ? `${request.part.run}~p${request.part.index}` : runIdOf(request)}`;
}
