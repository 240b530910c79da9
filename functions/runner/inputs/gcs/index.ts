/**
 * The `gcs` input: lists (page by page), filters, fingerprint-checks, downloads
 * (streaming, a few objects at a time), preprocesses and splits Cloud Storage objects
 * into events, and commits an object's fingerprint only after all of its events were
 * delivered. Each stage is a module of its own in this folder.
 *
 * Reports: `job-run-started`, `job-errors` (object name and reason; also a warning when
 * an unrestricted listing gets large), `job-metrics` and `job-run-ended` with the counts,
 * once the output has acknowledged everything the run delivered. A failure of the output
 * is the output's to report (types.ts `markReported`), never reported again here.
 *
 * @example
 *   const input = createGcsInput(job.input.gcs);
 *   await input.run(ctx, async (events) => output.write(events));
 */
import type { Bucket, Storage } from '@google-cloud/storage';
import type { GcsInput } from '../../../../shared/job/index.ts';
import { PART_MAX_BYTES, PART_MAX_OBJECTS } from '../../../../shared/runs/part-limits.ts';
import { readRowGroups } from '../../cores/parquet-groups.ts';
import { type ReadPool, sharedReadPool } from '../../cores/read-pool.ts';
import { type ActionReport, anyCoreRead, type ReadTask } from '../../cores/read-task.ts';
import { excerpt } from '../../excerpt.ts';
import {
  type DeliveryUnit,
  type Input,
  markReported,
  type RunContext,
  type RunEvent,
  type ShardControl,
  wasReported,
} from '../../types.ts';
import { type BatchFormat, eventObjects, jsonLines, jsonLinesWithActions } from './batches.ts';
import { storageForCredentials } from './client.ts';
import { type GcsPlan, planGcsInput } from './config.ts';
import { BATCH_EVENTS, DeliveryTracker, type Tracked } from './delivery.ts';
import { downloadBytes, readRange } from './download.ts';
import { listingEvent } from './fields.ts';
import { objectFilter } from './filter.ts';
import { fingerprintKey } from './fingerprint-key.ts';
import { InOrder } from './in-order.ts';
import { listObjects, type ObjectMeta, PAGE_SIZE, toMeta } from './list.ts';
import { listQueries, type TimeRange } from './list-range.ts';
import {
  type BackfillCoverage,
  backfillCoverage,
  covers,
  type Notice,
  notificationPages,
} from './notifications.ts';
import { rangeReader } from './parquet.ts';
import { contentEvents } from './payload.ts';
import { prefetch } from './prefetch.ts';
import { preprocess } from './preprocess.ts';
import { httpStatus, isTransient, type RetryPolicy, withRetry } from './retry.ts';
import { countSkip, newRunStats, type RunStats } from './stats.ts';
import { objectTimestamp } from './timestamp.ts';

export { planGcsInput } from './config.ts';

export interface GcsInputOptions {
  /** A ready client (tests); otherwise one is made from the job's credentials. */
  storage?: Storage;
  now?: () => Date;
  /** Objects downloaded at the same time. */
  concurrency?: number;
  /** First retry backoff in ms (tests shorten it). */
  baseDelayMs?: number;
  /** Listed objects after which an unrestricted listing (`object-names: []`) is warned about. */
  largeListingWarning?: number;
  /** Events per `deliver` call. */
  batchEvents?: number;
  /** Longest line read as an event (default MAX_LINE_BYTES); tests lower it. */
  maxLineBytes?: number;
  /** With `notifications` and a trigger: quiet time that ends a run (default 1 s). */
  notificationIdleMs?: number;
  /**
   * With `notifications` and no trigger: end the run when quiet too, rather than read until
   * stopped (the `cloud` worker, where notifications wake a run: functions/runs/wake.ts).
   */
  notificationsEndWhenQuiet?: boolean;
  /** Threads that read objects (default: the process's, one per core); null: the main thread only. */
  readPool?: ReadPool | null;
}

/** The watermark that says which subscription's first listing (backfill) is done. */
export const BACKFILL_WATERMARK = 'gcs-notifications-backfill';
/**
 * Beside it, which objects that listing covered: the filters it read with
 * (`backfillCoverage`, as JSON). A redeploy whose filters read objects that listing did not
 * cover (`object-names` widened, say) lists once more: the notifications of those objects
 * were acknowledged as not wanted.
 */
export const BACKFILL_COVERAGE_WATERMARK = 'gcs-notifications-backfill-coverage';

/**
 * Whether the first listing for this subscription is done, and covered the objects these
 * filters read. A watermark from before the coverage was kept (the subscription's alone) is
 * taken as covering the filters of today, and says so from now on: listing every notified
 * job's bucket again once, for filters that most likely did not change, would cost what
 * notifications save.
 */
async function backfilled(
  ctx: RunContext,
  subscription: string,
  coverage: BackfillCoverage,
): Promise<boolean> {
  if ((await ctx.watermarks.get(ctx.job, BACKFILL_WATERMARK)) !== subscription) return false;
  const covered = await ctx.watermarks.get(ctx.job, BACKFILL_COVERAGE_WATERMARK);
  if (covered === undefined) {
    await ctx.watermarks.set(ctx.job, BACKFILL_COVERAGE_WATERMARK, JSON.stringify(coverage));
    return true;
  }
  return covers(covered, coverage);
}

/**
 * Events, and bytes of JSON lines, that objects read ahead of their turn hold together
 * (`ordered`) before their reads wait too. Events alone let wide lines (20 KB each) hold
 * 2 GB and more.
 */
const ORDERED_AHEAD_EVENTS = 100 * BATCH_EVENTS;
const ORDERED_AHEAD_BYTES = 64 * 1024 * 1024;

/** Notified objects downloaded at the same time (a listing reads 4 at once). */
const NOTIFIED_CONCURRENCY = 16;

/** Longest a notified object's events wait for delivery after it was read. */
const FLUSH_SOON_MS = 100;

/** Object versions remembered as read in a run, so a notification that comes twice is read once. */
const RECENT_KEYS = 100_000;

/**
 * A notified object that failed is offered again (nack) after this long, not at once: a
 * let-go message comes straight back, and an object that fails each time would keep the
 * run busy failing. A run that ends sooner lets it go as it closes.
 */
const RETRY_FAILED_AFTER_MS = 30_000;

/** `job-errors` reports per object before the rest are only counted. */
const PROBLEMS_REPORTED_PER_OBJECT = 10;

export function createGcsInput(input: GcsInput, options: GcsInputOptions = {}): Input {
  const plan = planGcsInput(input);
  return {
    appliesActionsToJsonLines: true,
    async run(ctx, deliver) {
      await runGcsInput(plan, options, ctx, deliver);
    },
  };
}

interface ObjectState extends Tracked {
  meta: ObjectMeta;
}

interface Sink<B> {
  format: BatchFormat<B>;
  deliver(batch: B, unit?: DeliveryUnit): Promise<void>;
}

/** The object version a batch came from, for outputs that name what they write after it. */
function unitOf(meta: ObjectMeta): DeliveryUnit {
  return { key: fingerprintKey(meta), name: meta.name, generation: meta.generation };
}

export async function runGcsInput(
  plan: GcsPlan,
  options: GcsInputOptions,
  ctx: RunContext,
  deliver: (events: RunEvent[]) => Promise<void>,
): Promise<RunStats> {
  const started = Date.now();
  const now = options.now?.() ?? new Date();
  const stats = newRunStats();
  if (plan.notifications) stats.notifications = 0;
  ctx.report({ type: 'job-run-started', payload: { input: 'gcs', bucket: plan.bucket, mode: plan.mode } });
  // The fingerprint store connects while the Storage client is made and the first page listed.
  const preparing = plan.fingerprinting ? ctx.fingerprints.prepare?.(ctx.job).catch(() => {}) : undefined;
  const storage = options.storage ?? (await storageForCredentials(plan.credentials));
  const bucket = storage.bucket(plan.bucket);
  const policy: RetryPolicy = {
    retries: plan.retry.retries,
    timeoutMs: plan.retry.timeoutMs,
    signal: ctx.signal,
    ...(options.baseDelayMs !== undefined ? { baseDelayMs: options.baseDelayMs } : {}),
  };
  const reportError = (object: string | undefined, reason: string, detail: Record<string, unknown> = {}) => {
    stats.errors++;
    ctx.report({
      type: 'job-errors',
      payload: { input: 'gcs', bucket: plan.bucket, object, reason, ...detail },
    });
  };

  // Events go on as JSON lines when the output writes JSON text (NDJSON lines are then
  // never serialized again, and the job's actions apply to them as bytes), else as event
  // objects.
  const sink = ctx.deliverJsonLines
    ? ({
        format: ctx.actions ? jsonLinesWithActions(ctx.actions) : jsonLines,
        deliver: ctx.deliverJsonLines,
      } as Sink<unknown>)
    : ({ format: eventObjects, deliver } as Sink<unknown>);
  const readPool = options.readPool === undefined ? sharedReadPool() : (options.readPool ?? undefined);
  const tracker = new DeliveryTracker<ObjectState, unknown>(
    sink.format,
    async (batch, objects) => {
      await sink.deliver(batch, ctx.perUnit ? unitOf(objects[0]!.meta) : undefined);
      stats.events += sink.format.size(batch);
    },
    async (done) => {
      if (!plan.fingerprinting && !ctx.perUnit) return;
      // The output holds these objects' events until it has flushed them and its
      // destination acknowledged them; only then is it safe to say they were read.
      await ctx.acknowledge?.(done.map((o) => unitOf(o.meta)));
      if (!plan.fingerprinting) return;
      await ctx.fingerprints.commit(
        ctx.job,
        done.map((o) => fingerprintKey(o.meta)),
        plan.maximumFingerprintAgeMs,
      );
      stats.fingerprinted += done.length;
      // Only now is a notification done with: its object is delivered and remembered.
      for (const o of done) settle(o.meta, 'ack');
    },
    options.batchEvents,
    ctx.perUnit === true,
  );
  const track = (meta: ObjectMeta): ObjectState => ({
    meta,
    outstanding: 0,
    finished: false,
    failed: false,
    inBatch: false,
  });

  /** `followed`: more objects of its page wait to be read after this one. */
  const readObject = async (meta: ObjectMeta, followed: boolean): Promise<void> => {
    // First, synchronously: turns are taken in the order reads start, the listing's.
    const turn = inOrder?.enter<unknown>();
    // Nothing else being read (this read is not in the pool's count yet) nor waiting.
    const alone = pool.active === 0 && !followed;
    const object = track(meta);
    /** Events of this object handed on: what a damaged one gave before its damage. */
    let objectEvents = 0;
    const add = (batch: unknown) => {
      // Stopped: nothing more goes out, not even what objects read ahead of their turn hold.
      ctx.signal.throwIfAborted();
      objectEvents += sink.format.size(batch);
      return tracker.add(object, batch);
    };
    stats.downloaded++;
    let problems = 0;
    const problem = (reason: string, detail?: Record<string, unknown>) => {
      if (++problems <= PROBLEMS_REPORTED_PER_OBJECT) reportError(meta.name, reason, detail);
      else stats.errors++;
    };
    const finish = () => {
      if (problems > PROBLEMS_REPORTED_PER_OBJECT) {
        reportError(meta.name, 'more-problems', { unreported: problems - PROBLEMS_REPORTED_PER_OBJECT });
      }
      tracker.finish(object);
      // Its events may complete a batch only now (ordered: after its turn came).
      if (streaming) flushSoon();
    };
    const fail = (err: unknown) => {
      if (isDamaged(err)) {
        // Its bytes end or go wrong part-way (a gzip cut short by an interrupted upload): read
        // again, it gives the same events up to the same point, every run. What it gave goes
        // on, and it is done with like a read object (fingerprinted) until it is rewritten.
        stats.damaged_objects = (stats.damaged_objects ?? 0) + 1;
        reportError(meta.name, 'damaged-object', {
          message: `gs://${plan.bucket}/${meta.name} (generation ${meta.generation}) is damaged (${describeFailure(err)}): its first ${objectEvents} events were delivered, and it is not read again unless it is rewritten`,
          events_delivered: objectEvents,
          transient: false,
        });
        finish();
        return;
      }
      tracker.fail(object);
      if (streaming) flushSoon();
      // The output failed to take its events: the output said so, as its own failure, and
      // nothing more can be delivered in this run. Not this object's failure (nor its bucket's).
      if (wasReported(err)) {
        settle(meta, 'retry');
        deliveryFailure ??= { err };
        stopNotifications.abort();
        return;
      }
      // A notified version that is gone (overwritten or deleted since) has nothing to read.
      if (notices.has(meta) && httpStatus(err) === 404) {
        countSkip(stats, 'stale');
        settle(meta, 'ack');
        return;
      }
      stats.failed_objects++;
      reportError(meta.name, describeFailure(err), failureDetail(err));
      // Refused for good (a bad request): offered again it would fail again, every 30 s for
      // ever. Reported, it is done with; a listing can still read it.
      if (notices.has(meta) && isPermanent(err)) settle(meta, 'ack');
      else settle(meta, 'retry');
    };
    let failed: { err: unknown } | undefined;
    try {
      const onRequest = () => stats.download_requests++;
      const raw = countBytes(downloadBytes(bucket, meta, policy, {}, onRequest), stats);
      /** Bytes `start` to `end` (inclusive), for parquet. */
      const range = async (start: number, end: number) => {
        const bytes = await readRange(bucket, meta, policy, start, end, onRequest);
        stats.bytes += bytes.length;
        return bytes;
      };
      const task = readTask(plan, meta, options.maxLineBytes, ctx);
      const onActions = (report: ActionReport) => ctx.actions?.absorb(report.stats, report.failures);
      // On other cores when its events go on as JSON lines (the threads make those, and
      // apply the job's actions): as a stream of bytes, or parquet row group by row group.
      let onAnyCore = readPool && ctx.deliverJsonLines ? anyCoreRead(task) : undefined;
      // An object read alone (nothing else being read or waiting as it starts: a run of one
      // object, a notification now and then) is read here. On a thread it gains no core and
      // pays the hand-overs: one 200 MB gzip object took 1.13 s on a thread against 0.98 s
      // here. The first of many goes to a thread like the rest: read here, it made V8
      // optimise the reading code for this thread too (`contentEvents` alone took 50-100 ms
      // of a core to compile, `--trace-opt`) while the threads needed the cores.
      if (onAnyCore === 'bytes' && alone) onAnyCore = undefined;
      const batches =
        onAnyCore === 'bytes'
          ? readPool!.read(task, raw, problem, onActions, undefined, ctx.signal)
          : onAnyCore === 'row-groups'
            ? readRowGroups(
                readPool!,
                task,
                { byteLength: meta.size, read: (start, end) => range(start, end - 1) },
                problem,
                onActions,
              )
            : contentEvents(
                preprocess(raw, meta, plan.preprocessors, {
                  parquetSource: () => rangeReader(meta.size, range),
                }),
                task.payload,
                sink.format.batcher(plan, meta),
                problem,
              );
      for await (const batch of batches) {
        // Stopped: the read ends here (on a thread, the thread is told to stop), rather than
        // when the object is read to its end, which took 13 s and 2 GB more output.
        ctx.signal.throwIfAborted();
        await (turn
          ? turn.add(batch, { events: sink.format.size(batch), bytes: sink.format.bytes(batch) }, add)
          : add(batch));
      }
    } catch (err) {
      if (ctx.signal.aborted) {
        turn?.done();
        throw err;
      }
      failed = { err };
    }
    if (!turn) {
      if (failed) fail(failed.err);
      else finish();
      return;
    }
    // Read: its slot goes to the next object, while what it read waits for its turn (a
    // failed object's events too, as unordered). InOrder bounds what waits.
    const inTurn = turn
      .flush(add)
      .then(
        () => (failed ? fail(failed.err) : finish()),
        (err) => {
          deliveryFailure ??= { err };
          stopNotifications.abort();
        },
      )
      .finally(() => turn.done());
    waitingTurns.add(inTurn);
    void inTurn.finally(() => waitingTurns.delete(inTurn));
  };
  /** Objects read and waiting for their turn (`ordered`). */
  const waitingTurns = new Set<Promise<void>>();
  /** A delivery that failed while an object was read (or waited for its turn): the run stops. */
  let deliveryFailure: { err: unknown } | undefined;

  const filter = objectFilter(plan, { now, window: ctx.window });
  /** Stamped at or after the end of the run's window: due in a later one. */
  const afterWindow = (meta: ObjectMeta) => {
    const time = ctx.window && objectTimestamp(meta, plan.timestamp);
    return !!time && time.getTime() >= ctx.window!.end.getTime();
  };
  const notices = new WeakMap<ObjectMeta, Notice>();
  /** Object versions being read, with the notices that came for them again meanwhile. */
  const reading = new Map<string, Notice[]>();
  /** Object versions read (delivered and fingerprinted) in this run. */
  const recent = new Set<string>();
  const retryTimers = new Set<NodeJS.Timeout>();
  /**
   * Done with an object version: its notices (the one it came by, any that came again while
   * it was read) are acknowledged, or let go to come again (`retry`: after a while).
   */
  const settle = (meta: ObjectMeta, how: 'ack' | 'retry') => {
    const own = notices.get(meta);
    notices.delete(meta);
    const key = fingerprintKey(meta);
    const waiting = [...(own ? [own] : []), ...(reading.get(key) ?? [])];
    reading.delete(key);
    if (how === 'ack') {
      if (plan.notifications) remember(key);
      for (const notice of waiting) notice.ack();
      return;
    }
    for (const notice of waiting) {
      notice.hold();
      const timer = setTimeout(() => {
        retryTimers.delete(timer);
        notice.nack();
      }, RETRY_FAILED_AFTER_MS);
      retryTimers.add(timer);
    }
  };
  const remember = (key: string) => {
    recent.add(key);
    if (recent.size > RECENT_KEYS) recent.delete(recent.values().next().value!);
  };
  /** Ends the reading of notifications early: the output or an ordered turn failed. */
  const stopNotifications = new AbortController();
  /**
   * Whether the run is winding up before its budget (RunContext.wrapUp): then it starts no
   * new object and tells the run it left work for its rest.
   */
  let leftUndone = false;
  const woundUp = () => {
    if (!ctx.wrapUp?.signal.aborted) return false;
    leftUndone = true;
    ctx.wrapUp.leftUndone();
    return true;
  };
  /** Reading notifications: objects go on as soon as they are read. */
  let streaming = false;
  const inOrder = plan.ordered
    ? new InOrder({ events: ORDERED_AHEAD_EVENTS, bytes: ORDERED_AHEAD_BYTES })
    : undefined;
  // Notified objects come one by one, usually small: more at once keeps up with uploads.
  const pool = new Pool(options.concurrency ?? (plan.notifications ? NOTIFIED_CONCURRENCY : 4));
  let warned = false;
  const part = ctx.shards?.part as ObjectMeta[] | undefined;
  // Not split: a window's watermark moves on when its run ends, which must not be before
  // its objects are read; nor an ordered, a notified or a listing-only run.
  const sharder =
    ctx.shards && !part && !ctx.window && plan.mode !== 'list-objects' && !plan.ordered && !plan.notifications
      ? new Sharder(ctx.shards, stats)
      : undefined;
  /** Filters a listed page and drops the objects already fingerprinted. */
  const freshOf = async (page: ObjectMeta[]): Promise<ObjectMeta[]> => {
    // A part's objects were listed (and counted) by the run that handed them over.
    if (!part) stats.listed += page.length;
    if (!warned && plan.objectNames.length === 0 && stats.listed >= (options.largeListingWarning ?? 10_000)) {
      warned = true;
      ctx.report({
        type: 'job-errors',
        payload: {
          input: 'gcs',
          level: 'warning',
          bucket: plan.bucket,
          reason: 'large-listing',
          message: `object-names is empty: listing every object of ${plan.bucket} (${stats.listed} so far); name prefixes or an anchored object-name-pattern with a window list less`,
        },
      });
    }
    const wanted: ObjectMeta[] = [];
    for (const meta of page) {
      const reason = notices.has(meta) && !isNamed(plan, meta) ? 'not-named' : filter(meta);
      if (reason === 'outside-window' && notices.has(meta) && afterWindow(meta)) {
        // Its window is not complete yet: a later run reads it, so its notice must stay.
        countSkip(stats, 'not-due');
        notices.get(meta)!.hold();
        notices.delete(meta);
      } else if (reason === 'outside-window' && notices.has(meta)) {
        // Stamped before the window: the run of its window never received its notification
        // (Pub/Sub delivered it late, held it back behind later windows' ones, or offered it
        // again after a lease ran out). Read now; skipped, nothing would ever read it.
        stats.late = (stats.late ?? 0) + 1;
        wanted.push(meta);
      } else if (reason) {
        countSkip(stats, reason);
        settle(meta, 'ack');
      } else wanted.push(meta);
    }
    const fresh = plan.fingerprinting ? await unseen(wanted, ctx, stats) : wanted;
    if (!plan.notifications) return fresh;
    const unread = new Set(fresh);
    const taken: ObjectMeta[] = [];
    for (const meta of wanted) {
      if (!unread.has(meta)) {
        settle(meta, 'ack');
        continue;
      }
      // A version listed and notified, or notified twice, is read once in a run. A notice
      // that comes while its version is being read waits for that read: acknowledged with
      // it, or let go with it if it fails.
      const key = fingerprintKey(meta);
      const again = reading.get(key);
      if (recent.has(key) || again) {
        countSkip(stats, 'duplicate');
        const notice = notices.get(meta);
        notices.delete(meta);
        if (!again) notice?.ack();
        else if (notice) again.push(notice);
        continue;
      }
      reading.set(key, []);
      taken.push(meta);
    }
    return taken;
  };
  /**
   * Notified objects go on as soon as they are read, not when a batch fills up: a delivery
   * (and fingerprint commit) at most every FLUSH_SOON_MS while objects complete.
   */
  let flushTimer: NodeJS.Timeout | undefined;
  let flushFailure: unknown;
  const flushSoon = () => {
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      tracker.flush().catch((err) => {
        flushFailure ??= err;
        stopNotifications.abort();
      });
    }, FLUSH_SOON_MS);
  };
  /**
   * Reads the objects of `pages`, to the last delivery and fingerprint. Three stages
   * overlap, one page ahead each: listing (or receiving) page N+2, checking the fingerprints
   * of page N+1, reading the objects of page N. At most three pages of metadata are held at
   * once, however large the bucket.
   */
  const readPages = async (pages: AsyncIterable<ObjectMeta[]>, streamingPages: boolean) => {
    streaming = streamingPages;
    try {
      for await (const fresh of prefetch(mapPages(pages, freshOf), 1)) {
        if (flushFailure !== undefined) throw flushFailure;
        // Winding up before the run's budget: no new object; what was read is delivered below.
        if (woundUp()) break;
        if (plan.mode === 'list-objects') {
          for (const meta of fresh) {
            const object = track(meta);
            const batcher = sink.format.batcher(plan, meta);
            batcher.event(listingEvent(plan, meta));
            await tracker.add(object, batcher.take()!);
            tracker.finish(object);
          }
          if (streaming) flushSoon();
        } else {
          for (const [index, meta] of fresh.entries()) {
            ctx.signal.throwIfAborted();
            if (woundUp()) break;
            if (await sharder?.handOver(meta)) continue;
            const followed = index < fresh.length - 1;
            await pool.run(() => readObject(meta, followed));
            if (deliveryFailure) throw deliveryFailure.err;
          }
        }
      }
      await sharder?.flush();
      await pool.drain();
      await Promise.all(waitingTurns);
      if (deliveryFailure) throw deliveryFailure.err;
    } finally {
      clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    await tracker.flush();
    if (flushFailure !== undefined) throw flushFailure;
  };
  /** Whether this run said that its notifications come without payload. */
  let toldNoPayload = false;
  /**
   * A config made with payload format NONE (by hand, by terraform) sends messages the input
   * cannot read an object by: every object it names is skipped. Said once a run, with the fix.
   */
  const tellNoPayload = (notice: Notice) => {
    if (toldNoPayload || notice.payloadFormat !== 'NONE') return;
    toldNoPayload = true;
    const config = notice.notificationConfig;
    reportError(undefined, 'no-payload', {
      ...(config ? { notification_config: config } : {}),
      message: `notifications of gs://${plan.bucket} come without the object resource (payload format NONE${config ? `, notification config ${config}` : ''}): the objects they name are not read (skipped.no-payload). Recreate the config with payload format JSON_API_V1: delete it (gcloud storage buckets notifications delete ${config ?? `projects/_/buckets/${plan.bucket}/notificationConfigs/ID`}) and make one: sluice gcs notify ${plan.bucket} --job JOB does, on a topic and subscription of its own that it prints for the job (or gcloud storage buckets notifications create gs://${plan.bucket} --topic=TOPIC --payload-format=json; terraform: payload_format = "JSON_API_V1"). Then run the job once with backfill: true to read the objects skipped meanwhile.`,
    });
  };
  /** Notices become the objects they name; the others are done with at once. */
  async function* noticedObjects(pages: AsyncIterable<Notice[]>): AsyncGenerator<ObjectMeta[]> {
    for await (const page of pages) {
      const metas: ObjectMeta[] = [];
      for (const notice of page) {
        stats.notifications!++;
        if (!notice.meta) {
          if (notice.ignored === 'no-payload') tellNoPayload(notice);
          countSkip(stats, notice.ignored ?? 'ignored');
          notice.ack();
          continue;
        }
        notices.set(notice.meta, notice);
        metas.push(notice.meta);
      }
      yield metas;
    }
  }
  let failure: unknown;
  try {
    const notifications = plan.notifications;
    // With notifications, the bucket is listed once (for the objects that were there
    // before the subscription), or every run with `backfill: true`.
    const coverage = notifications ? backfillCoverage(plan) : undefined;
    const backfill =
      notifications &&
      (notifications.backfill || !(await backfilled(ctx, notifications.subscription, coverage!)));
    if (part) {
      await readPages(pagesOf(part), false);
    } else if (!notifications || backfill) {
      const failedBefore = stats.failed_objects;
      await readPages(prefetch(candidatePages(plan, bucket, policy, now, ctx, stats, reportError), 1), false);
      // An object that failed to read has no notification to bring it back: the next run
      // lists again (the objects read are skipped by fingerprint).
      // The coverage first: a run stopped between the two writes lists again.
      // Nor a listing wound up before the run's budget: its rest lists again.
      if (notifications && stats.failed_objects === failedBefore && !leftUndone) {
        await ctx.watermarks.set(ctx.job, BACKFILL_COVERAGE_WATERMARK, JSON.stringify(coverage));
        await ctx.watermarks.set(ctx.job, BACKFILL_WATERMARK, notifications.subscription);
      }
    }
    if (notifications) {
      const stopReceiving = [
        ctx.signal,
        stopNotifications.signal,
        ...(ctx.wrapUp ? [ctx.wrapUp.signal] : []),
      ];
      const pages = notificationPages(plan, AbortSignal.any(stopReceiving), {
        untilStopped: !plan.triggered && !options.notificationsEndWhenQuiet,
        ...(options.notificationIdleMs !== undefined ? { idleMs: options.notificationIdleMs } : {}),
      });
      try {
        await readPages(noticedObjects(pages), true);
        // Stopped receiving to wind up: more may be waiting, for the run's rest.
        woundUp();
      } finally {
        // After the last delivery and commit: their notices are acknowledged by now.
        await pages.close();
      }
    }
    // `job-run-ended` says the run is delivered: what the output still buffers is flushed and
    // accepted first (without fingerprints or {source} names, nothing waited for that yet).
    await ctx.acknowledge?.();
  } catch (err) {
    await pool.drain().catch(() => {});
    if (!ctx.signal.aborted) failure = err;
  }
  // The subscription is closed: what waited to be let go comes again anyway.
  for (const timer of retryTimers) clearTimeout(timer);
  await preparing;
  // A run that fails as a whole (the listing, the fingerprint store) still says why, with
  // the HTTP status when there is one, and still ends with its counts. An output's failure
  // was reported by the output, naming its own bucket, topic or URL: not again as this bucket's.
  if (failure !== undefined && !wasReported(failure))
    reportError(undefined, describeFailure(failure), failureDetail(failure));
  const ended = {
    input: 'gcs',
    bucket: plan.bucket,
    ...stats,
    duration_ms: Date.now() - started,
    aborted: ctx.signal.aborted,
    failed: failure !== undefined,
  };
  ctx.report({ type: 'job-metrics', payload: ended });
  ctx.report({ type: 'job-run-ended', payload: ended });
  if (failure !== undefined) throw markReported(failure);
  return stats;
}

/** Only what a read needs, as plain data for another thread (the plan holds regexes and credentials). */
function readTask(
  plan: GcsPlan,
  meta: ObjectMeta,
  maxLineBytes: number | undefined,
  ctx: RunContext,
): ReadTask {
  const { payloadMode, ignoreLinebreaks, fields, dataField } = plan;
  return {
    meta,
    preprocessors: plan.preprocessors,
    payload: { payloadMode, ignoreLinebreaks, ...(maxLineBytes !== undefined ? { maxLineBytes } : {}) },
    shape: { fields, ...(dataField ? { dataField } : {}) },
    ...(ctx.actions ? { actions: { list: ctx.actions.actions, job: ctx.job, worker: ctx.worker } } : {}),
  };
}

/** Pages of objects to consider: a listing, or the named objects of `download-objects`. */
async function* candidatePages(
  plan: GcsPlan,
  bucket: Bucket,
  policy: RetryPolicy,
  now: Date,
  ctx: RunContext,
  stats: RunStats,
  reportError: (object: string | undefined, reason: string, detail?: Record<string, unknown>) => void,
): AsyncGenerator<ObjectMeta[]> {
  if (plan.mode === 'download-objects') {
    for (let i = 0; i < plan.objectNames.length; i += 100) {
      const names = plan.objectNames.slice(i, i + 100);
      const metas = await Promise.all(
        names.map(async (name) => {
          try {
            const [metadata] = await withRetry(() => bucket.file(name).getMetadata(), policy);
            return toMeta(bucket.name, metadata as Record<string, unknown>);
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            reportError(name, describeFailure(err), failureDetail(err));
            return undefined;
          }
        }),
      );
      yield metas.filter((m): m is ObjectMeta => m !== undefined);
    }
    return;
  }
  const range: TimeRange = {};
  if (plan.maximumAgeMs !== undefined) range.start = new Date(now.getTime() - plan.maximumAgeMs);
  if (ctx.window) {
    if (!range.start || ctx.window.start > range.start) range.start = ctx.window.start;
    range.end = ctx.window.end;
  }
  const pattern = plan.timestamp.kind === 'object-name-pattern' ? plan.timestamp.pattern.source : undefined;
  const queries = listQueries(plan.objectNames, pattern, range);
  yield* listObjects(bucket, queries, policy, () => stats.list_requests++);
}

/**
 * Hands objects to other runners once the run has `threshold` of its own: the first
 * `threshold` fresh objects are read here, every further `threshold` become a part.
 */
class Sharder {
  private kept = 0;
  private pending: ObjectMeta[] = [];
  /** The JSON of `pending`, as the part request will carry it. */
  private pendingBytes = 0;

  constructor(
    private readonly shards: ShardControl,
    private readonly stats: RunStats,
  ) {}

  /** True when the object went to a part (not to be read here). */
  async handOver(meta: ObjectMeta): Promise<boolean> {
    if (this.kept < this.shards.threshold) {
      this.kept++;
      return false;
    }
    // Cut by bytes too: a part of many long-named objects would not fit in one request.
    const bytes = Buffer.byteLength(JSON.stringify(meta)) + 1;
    const room = (this.shards.maxPartBytes ?? PART_MAX_BYTES) - PART_ENVELOPE_BYTES;
    if (this.pending.length && this.pendingBytes + bytes > room) await this.flush();
    this.pending.push(meta);
    this.pendingBytes += bytes;
    if (this.pending.length >= Math.min(this.shards.threshold, PART_MAX_OBJECTS)) await this.flush();
    return true;
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const part = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    await this.shards.request(part as unknown as Record<string, unknown>[]);
    this.stats.sharded_objects = (this.stats.sharded_objects ?? 0) + part.length;
    this.stats.shards = (this.stats.shards ?? 0) + 1;
  }
}

/** What a part request holds besides its objects (tenant, job, run, reason...), at most. */
const PART_ENVELOPE_BYTES = 2048;

async function* pagesOf(objects: ObjectMeta[]): AsyncGenerator<ObjectMeta[]> {
  for (let i = 0; i < objects.length; i += PAGE_SIZE) yield objects.slice(i, i + PAGE_SIZE);
}

/** Whether `object-names` (prefixes) covers a notified object; an empty list covers all. */
function isNamed(plan: GcsPlan, meta: ObjectMeta): boolean {
  return plan.objectNames.length === 0 || plan.objectNames.some((prefix) => meta.name.startsWith(prefix));
}

async function* mapPages<T, U>(pages: AsyncIterable<T>, map: (page: T) => Promise<U>): AsyncGenerator<U> {
  for await (const page of pages) yield await map(page);
}

async function unseen(metas: ObjectMeta[], ctx: RunContext, stats: RunStats): Promise<ObjectMeta[]> {
  if (!metas.length) return metas;
  const keys = metas.map(fingerprintKey);
  const seen = await ctx.fingerprints.seen(ctx.job, keys);
  const fresh = metas.filter((_, i) => !seen.has(keys[i]!));
  for (let i = fresh.length; i < metas.length; i++) countSkip(stats, 'fingerprinted');
  return fresh;
}

async function* countBytes(chunks: AsyncIterable<Buffer>, stats: RunStats): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    stats.bytes += chunk.length;
    yield chunk;
  }
}

/**
 * Answers that asking again for the same object gives again: 400 (a bad request). Not 403:
 * a permission is granted and propagates within minutes, and acknowledging every object
 * notified meanwhile would leave them all to a backfill; offered again, they are read once
 * it has.
 */
const PERMANENT_STATUSES = new Set([400]);

function isPermanent(err: unknown): boolean {
  const status = httpStatus(err);
  return status !== undefined && PERMANENT_STATUSES.has(status);
}

/** `status` (HTTP) when the failure was an answer, and whether trying again may help. */
function failureDetail(err: unknown): Record<string, unknown> {
  const status = httpStatus(err);
  return { ...(status !== undefined ? { status } : {}), transient: isTransient(err) };
}

/**
 * Whether the object's own bytes are at fault (zlib: data that is not what its format says, or
 * that ends before its end), not the way to them: the same bytes fail the same way every time.
 */
function isDamaged(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR';
}

function describeFailure(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = e?.code !== undefined ? `${e.code}: ` : '';
  return excerpt(`${code}${String(e?.message ?? err)}`, 500);
}

/** Runs at most `size` tasks at once; `run` waits for a free slot, so the caller is throttled. */
class Pool {
  private running = new Set<Promise<void>>();
  private failure: unknown;
  constructor(private readonly size: number) {}

  async run(task: () => Promise<void>): Promise<void> {
    while (this.running.size >= this.size) await Promise.race(this.running);
    if (this.failure) throw this.failure;
    const promise: Promise<void> = task()
      .catch((err) => {
        this.failure ??= err;
      })
      .finally(() => this.running.delete(promise));
    this.running.add(promise);
  }

  /** Tasks started and not yet done (a task is counted once `run` has started it). */
  get active(): number {
    return this.running.size;
  }

  async drain(): Promise<void> {
    await Promise.all(this.running);
    if (this.failure) throw this.failure;
  }
}
