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
 * message came for `idleMs` (a triggered run reads what is waiting), or never, until the
 * run's signal is aborted (an input without a trigger reads as messages come).
 *
 * @example
 *   for await (const page of notificationPages(plan, signal, { untilStopped: false })) {
 *     for (const notice of page) if (!notice.meta) notice.ack();
 *   }
 */
import type { Message } from '@google-cloud/pubsub';
import { pubsubFor } from '../../pubsub-client.ts';
import type { GcsPlan } from './config.ts';
import { type ObjectMeta, toMeta } from './list.ts';

/** One notification: the object version to read, or why there is none. */
export interface Notice {
  meta?: ObjectMeta;
  /** Why the notification names nothing to read (another event type or bucket, no payload). */
  ignored?: 'not-finalize' | 'other-bucket' | 'no-payload';
  ack(): void;
  /** Lets Pub/Sub deliver it again (the object could not be read). */
  nack(): void;
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

export async function* notificationPages(
  plan: Pick<GcsPlan, 'bucket' | 'credentials' | 'notifications'>,
  signal: AbortSignal,
  options: NotificationOptions,
): AsyncGenerator<Notice[]> {
  if (!plan.notifications) return;
  const { pubsub, name } = await pubsubFor(
    plan.credentials,
    plan.notifications.subscription,
    'subscriptions',
  );
  const subscription = pubsub.subscription(name, {
    flowControl: { maxMessages: MAX_OUTSTANDING, allowExcessMessages: false },
  });
  const queue: Message[] = [];
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
  try {
    let quiet = options.untilStopped ? Number.POSITIVE_INFINITY : FIRST_MESSAGE_MS;
    for (;;) {
      if (!queue.length && !failure && !signal.aborted) await waitMs(quiet);
      if (failure) throw failure;
      if (signal.aborted || !queue.length) return;
      if (!options.untilStopped) quiet = options.idleMs ?? DEFAULT_IDLE_MS;
      yield queue.splice(0, NOTICES_PER_PAGE).map((message) => noticeOf(plan.bucket, message));
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    subscription.removeListener('message', onMessage);
    subscription.removeListener('error', onError);
    // Messages not acknowledged by now are delivered again later (their leases end).
    await subscription.close().catch(() => {});
    await pubsub.close().catch(() => {});
  }
}

/** The object version a Cloud Storage notification names (payload format JSON_API_V1). */
export function noticeOf(bucket: string, message: Message): Notice {
  const ack = () => message.ack();
  const nack = () => message.nack();
  const { eventType, bucketId } = message.attributes ?? {};
  if (eventType !== 'OBJECT_FINALIZE') return { ignored: 'not-finalize', ack, nack };
  if (bucketId !== bucket) return { ignored: 'other-bucket', ack, nack };
  let resource: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(message.data.toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { name?: unknown }).name === 'string')
      resource = parsed as Record<string, unknown>;
  } catch {
    resource = undefined;
  }
  if (!resource) return { ignored: 'no-payload', ack, nack };
  return { meta: toMeta(bucket, resource), ack, nack };
}
