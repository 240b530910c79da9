/**
 * Object notifications as the source of a `gcs` input's objects (a Sluice extension:
 * `notifications: {subscription}`): the bucket sends an `OBJECT_FINALIZE` message to a
 * Pub/Sub topic for every object written, and the input reads the objects those messages
 * name, in arrival order, instead of listing the bucket. The rest of the pipeline
 * (filters, fingerprints, reading, delivery) is the listing's.
 *
 * Messages come by streaming pull (the client library keeps their leases while they wait);
 * each is acknowledged by the input only once its object's events are delivered and its
 * fingerprint committed, or once it is known to need no reading. Pages end a run when no
 * message came for `idleMs` and every message handed on was settled (a triggered run
 * reads what is waiting), or never, until the run's signal is aborted (an input without a
 * trigger reads as messages come). Closing the subscription lets Pub/Sub deliver again
 * every message still held, so it waits for the ones being read.
 *
 * The subscription stays open after the pages end, until `close()`: what the run read last
 * is acknowledged only after its final delivery and commit, and closing first would let it
 * go (a stopped `sluice job run` had 59 of 10,000 notifications come again on restart).
 *
 * @example
 *   const notifications = notificationPages(plan, signal, { untilStopped: false });
 *   try {
 *     for await (const page of notifications) for (const notice of page) if (!notice.meta) notice.ack();
 *   } finally {
 *     await notifications.close();
 *   }
 */
import type { Message } from '@google-cloud/pubsub';
import { pubsubFor } from '../../pubsub-client.ts';
import type { GcsPlan } from './config.ts';
import { isGeneration } from './download.ts';
import { type ObjectMeta, toMeta } from './list.ts';

/** One notification: the object version to read, or why there is none. */
export interface Notice {
  meta?: ObjectMeta;
  /**
   * Why the notification names nothing to read: another event type or bucket, no payload,
   * or a message that does not name one version (a generation that is not one, a payload
   * naming another generation, object or bucket than its attributes).
   */
  ignored?: 'not-finalize' | 'other-bucket' | 'no-payload' | 'malformed';
  /** With `no-payload`: the message's `payloadFormat` attribute (`NONE` for a config made without one). */
  payloadFormat?: string;
  /** With `no-payload`: the config that sent it (`projects/_/buckets/B/notificationConfigs/N`). */
  notificationConfig?: string;
  ack(): void;
  /** Lets Pub/Sub deliver it again (the object could not be read). */
  nack(): void;
  /**
   * Keeps it unacknowledged without waiting on it: the run may end, and closing the
   * subscription then lets Pub/Sub deliver it again (an object not due yet).
   */
  hold(): void;
}

export interface NotificationOptions {
  /** Read until the signal is aborted (no trigger), else until `idleMs` pass without a message. */
  untilStopped: boolean;
  /** Quiet time that ends a triggered run's reading (default 1 s; the first message may take 3 s). */
  idleMs?: number;
}

/** Notices handed on at once at most; as many wait, leased, in the client. */
export const NOTICES_PER_PAGE = 500;
const MAX_OUTSTANDING = 2 * NOTICES_PER_PAGE;
const DEFAULT_IDLE_MS = 1000;
/** Streaming pull needs a moment to open before the first message can come. */
const FIRST_MESSAGE_MS = 3000;

export interface NotificationPages extends AsyncIterable<Notice[]> {
  /** Closes the subscription: what is not acknowledged by then is let go. */
  close(): Promise<void>;
}

export function notificationPages(
  plan: Pick<GcsPlan, 'bucket' | 'credentials' | 'notifications'>,
  signal: AbortSignal,
  options: NotificationOptions,
): NotificationPages {
  let close = async () => {};
  return {
    [Symbol.asyncIterator]: () =>
      pagesOf(plan, signal, options, (closer) => {
        close = closer;
      }),
    close: () => close(),
  };
}

async function* pagesOf(
  plan: Pick<GcsPlan, 'bucket' | 'credentials' | 'notifications'>,
  signal: AbortSignal,
  options: NotificationOptions,
  onOpen: (close: () => Promise<void>) => void,
): AsyncGenerator<Notice[]> {
  if (!plan.notifications) return;
  const { pubsub, name } = await pubsubFor(
    plan.credentials,
    plan.notifications.subscription,
    'subscriptions',
  );
  const subscription = pubsub.subscription(name, {
    flowControl: { maxMessages: MAX_OUTSTANDING, allowExcessMessages: false },
    // Not acknowledged when the run ends (held, failed, or being read when it was stopped):
    // let go as it closes, so that Pub/Sub offers them again at once, not when their leases
    // run out. The library's default today; said here because the input relies on it.
    closeOptions: { behavior: 'NACK' },
  });
  const queue: Message[] = [];
  /** Handed on and neither settled nor held: the run must not close under them. */
  let unsettled = 0;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const onMessage = (message: Message) => {
    queue.push(message);
    wake?.();
  };
  const onError = (err: unknown) => {
    failure ??= err;
    wake?.();
  };
  const onAbort = () => wake?.();
  subscription.on('message', onMessage);
  subscription.on('error', onError);
  signal.addEventListener('abort', onAbort);
  onOpen(async () => {
    // Closed before its listener goes: removing the last one closes it too, without waiting
    // for its let-gos to be sent, and the client closed next would lose them.
    await subscription.close().catch(() => {});
    subscription.removeListener('message', onMessage);
    subscription.removeListener('error', onError);
    await pubsub.close().catch(() => {});
  });
  const waitMs = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : undefined;
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wake = undefined;
    });
  const settled = () => {
    unsettled--;
    wake?.();
  };
  try {
    let quiet = options.untilStopped ? Number.POSITIVE_INFINITY : FIRST_MESSAGE_MS;
    for (;;) {
      if (!queue.length && !failure && !signal.aborted) await waitMs(quiet);
      if (failure) throw failure;
      if (signal.aborted) return;
      if (!queue.length) {
        // Quiet, but objects are still being read: their messages come after them.
        if (unsettled > 0 || options.untilStopped) continue;
        return;
      }
      if (!options.untilStopped) quiet = options.idleMs ?? DEFAULT_IDLE_MS;
      const page = queue.splice(0, NOTICES_PER_PAGE);
      unsettled += page.length;
      yield page.map((message) => once(noticeOf(plan.bucket, message), settled));
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The notice, calling `settled` the first time it is acknowledged, let go or held. A held
 * one may still be let go later; after an acknowledgement or a let-go nothing counts.
 */
function once(notice: Notice, settled: () => void): Notice {
  let counted = false;
  let done = false;
  const count = () => {
    if (counted) return;
    counted = true;
    settled();
  };
  const finally_ = (then: () => void) => (): void => {
    if (done) return;
    done = true;
    then();
    count();
  };
  const hold = () => {
    if (!done) count();
  };
  return { ...notice, ack: finally_(notice.ack), nack: finally_(notice.nack), hold };
}

/**
 * The object version a Cloud Storage notification names (payload format JSON_API_V1). The
 * attributes name it (`bucketId`, `objectId`, `objectGeneration`); the payload, the object
 * resource, must name the same (a message that does not agree with itself is `malformed`:
 * reading either would read what one of them does not vouch for).
 */
export function noticeOf(bucket: string, message: Message): Notice {
  const ack = () => message.ack();
  const nack = () => message.nack();
  const hold = () => {};
  const { eventType, bucketId, objectId, objectGeneration, payloadFormat, notificationConfig } =
    message.attributes ?? {};
  if (eventType !== 'OBJECT_FINALIZE') return { ignored: 'not-finalize', ack, nack, hold };
  if (bucketId !== bucket) return { ignored: 'other-bucket', ack, nack, hold };
  let resource: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(message.data.toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { name?: unknown }).name === 'string')
      resource = parsed as Record<string, unknown>;
  } catch {
    resource = undefined;
  }
  if (!resource)
    return {
      ignored: 'no-payload',
      ...(payloadFormat ? { payloadFormat } : {}),
      ...(notificationConfig ? { notificationConfig } : {}),
      ack,
      nack,
      hold,
    };
  // The version read is pinned to the generation: one the message does not vouch for
  // would read whatever is current, under another fingerprint.
  const generation = resource.generation;
  if (
    !isGeneration(objectGeneration) ||
    (generation !== undefined && String(generation) !== objectGeneration) ||
    resource.name !== objectId ||
    (resource.bucket !== undefined && resource.bucket !== bucketId)
  )
    return { ignored: 'malformed', ack, nack, hold };
  return { meta: toMeta(bucket, { ...resource, generation: objectGeneration }), ack, nack, hold };
}

/**
 * What decides which of the bucket's objects a run reads: what a notified input's first
 * listing (backfill) covered is kept as this (JSON), and a run whose filters it does not
 * cover lists again. The run's window is left out: a window's listing covers only it.
 */
export interface BackfillCoverage {
  /** `object-names`, as prefixes; empty: every object. */
  objectNames: string[];
  include: string[];
  exclude: string[];
  /** The timestamp mode, or the `object-name-pattern`. */
  timestamp: string;
  maximumAgeMs: number | null;
}

export function backfillCoverage(
  plan: Pick<GcsPlan, 'objectNames' | 'include' | 'exclude' | 'timestamp' | 'maximumAgeMs'>,
): BackfillCoverage {
  const sorted = (values: string[]) => [...new Set(values)].sort();
  return {
    objectNames: sorted(plan.objectNames),
    include: sorted(plan.include.map((re) => re.source)),
    exclude: sorted(plan.exclude.map((re) => re.source)),
    timestamp:
      plan.timestamp.kind === 'object-name-pattern' ? plan.timestamp.pattern.source : plan.timestamp.kind,
    maximumAgeMs: plan.maximumAgeMs ?? null,
  };
}

/**
 * Whether a listing with the filters `listed` (as kept, JSON) read every object the filters
 * `now` read: each prefix of `now` under one of `listed` (or `listed` has none), its
 * include-regexes among those of `listed` (or `listed` has none), the excludes of `listed`
 * among its own, and no older objects than `listed` read (the same timestamp, a maximum age
 * no longer). Regexes are compared as written: another spelling of the same one lists again.
 * What cannot be read as coverage is taken as covering nothing.
 */
export function covers(listed: string, now: BackfillCoverage): boolean {
  let then: BackfillCoverage;
  try {
    then = JSON.parse(listed) as BackfillCoverage;
  } catch {
    return false;
  }
  if (
    !then ||
    !Array.isArray(then.objectNames) ||
    !Array.isArray(then.include) ||
    !Array.isArray(then.exclude)
  )
    return false;
  const named =
    then.objectNames.length === 0 ||
    (now.objectNames.length > 0 &&
      now.objectNames.every((p) => then.objectNames.some((q) => p.startsWith(q))));
  const included =
    then.include.length === 0 ||
    (now.include.length > 0 && now.include.every((re) => then.include.includes(re)));
  const excluded = then.exclude.every((re) => now.exclude.includes(re));
  const aged =
    then.maximumAgeMs === null ||
    (now.maximumAgeMs !== null && now.timestamp === then.timestamp && now.maximumAgeMs <= then.maximumAgeMs);
  return named && included && excluded && aged;
}
