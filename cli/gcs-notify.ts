/**
 * What `sluice gcs notify BUCKET --job NAME` sets up, so that a `gcs` input can read the
 * bucket's new objects by notification (`notifications: {subscription}`): a Pub/Sub topic,
 * the right for the bucket's Cloud Storage service agent to publish to it, a subscription
 * (never expires, keeps notifications 7 days: one that existed without is changed, or
 * warned about), and the bucket's notification config (`OBJECT_FINALIZE`, payload `JSON_API_V1`, the
 * object resource the input reads). Each step keeps what exists, so running it again
 * changes nothing, and running it again after a failure goes on where it stopped. What
 * exists but would not deliver (a subscription on another topic, another config of the
 * bucket on this topic) is refused, not kept: it would lose or double notifications. With
 * `STORAGE_EMULATOR_HOST` and `PUBSUB_EMULATOR_HOST` it sets up the emulators (the Pub/Sub
 * emulator has no IAM: the grant is skipped).
 *
 * @example
 *   const setup = await setUpBucketNotifications(
 *     { bucket: 'landing', name: 'sluice-gcs-landing-orders', project: 'p' }, { storage, pubsub });
 *   setup.subscription; // projects/p/subscriptions/sluice-gcs-landing-orders
 */
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { sleep } from '../functions/runner/sleep.ts';
import { WAKE_PATH } from '../shared/runs/wake.ts';

export interface NotifyRequest {
  bucket: string;
  /** The topic's and the subscription's name. */
  name: string;
  project: string;
  /** Only objects whose names start with it. */
  prefix?: string;
  /**
   * For a job without a trigger on the `cloud` worker: a second subscription on the topic
   * that pushes each notification to the runner function, which wakes the job
   * (functions/runs/wake.ts).
   */
  wake?: WakeRequest;
}

export interface WakeRequest {
  /** The runner function's URL (terraform output `runner_url`). */
  runnerUrl: string;
  tenant: string;
  job: string;
  /** The identity whose OIDC token the push carries (terraform output `run_push_service_account`). */
  serviceAccount?: string;
}

export interface NotifySetup {
  bucket: string;
  topic: string;
  subscription: string;
  notification: string;
  /** Who publishes: the Cloud Storage service agent of the bucket's project. */
  serviceAgent: string;
  /** The push subscription that wakes the job (with `wake`). */
  wakeSubscription?: string;
  /** What this call made (the rest existed). */
  created: string[];
  /** What this call changed of what existed (a subscription's retention or expiry). */
  updated: string[];
  /** What exists and is not as it should be, and could not be changed: what to run. */
  warnings: string[];
}

const PUBLISHER = 'roles/pubsub.publisher';
const FINALIZE = 'OBJECT_FINALIZE';

/**
 * How long the job's subscription keeps a notification nobody acknowledged: 7 days. A job
 * that does not run for longer loses the older ones; one listing (`backfill: true`) then
 * reads their objects. Pub/Sub now takes up to 31 days (kept unacknowledged for more than a
 * day, messages are billed as storage), the Pub/Sub emulator 7 at most: a longer retention
 * set by hand is kept.
 */
export const RETENTION_SECONDS = 7 * 24 * 3600;
/**
 * An expiration policy without a `ttl`: the subscription is never deleted. Pub/Sub's default
 * deletes one after 31 days without activity (a job undeployed for a while, a sparse
 * trigger), and the notifications with it.
 */
const NEVER_EXPIRES = {};

export interface SetUpOptions {
  env?: NodeJS.ProcessEnv;
  /** Between tries of the notification config while a fresh grant spreads (default: sleeps). */
  wait?: (ms: number) => Promise<void>;
  /** Told before each wait, to show progress. */
  onWait?: (message: string) => void;
}

/**
 * A fresh publisher grant (or topic) takes a few seconds to reach Cloud Storage, which
 * checks it when the config is made: gcloud waits 10 s and tries again, and so do we.
 */
const GRANT_WAIT_MS = 10_000;
const GRANT_TRIES = 4;

export async function setUpBucketNotifications(
  request: NotifyRequest,
  clients: { storage: Storage; pubsub: PubSub },
  options: SetUpOptions = {},
): Promise<NotifySetup> {
  const created: string[] = [];
  try {
    return await setUp(request, clients, options, created);
  } catch (err) {
    throw new NotifySetupError(err instanceof NotifySetupError ? err.message : errorMessage(err), {
      created,
      cause: err,
    });
  }
}

async function setUp(
  request: NotifyRequest,
  { storage, pubsub }: { storage: Storage; pubsub: PubSub },
  options: SetUpOptions,
  created: string[],
): Promise<NotifySetup> {
  const updated: string[] = [];
  const warnings: string[] = [];
  const env = options.env ?? process.env;
  const bucket = storage.bucket(request.bucket);
  const [bucketExists] = await bucket.exists();
  if (!bucketExists)
    throw new NotifySetupError(`bucket ${request.bucket} does not exist (or this account cannot see it)`);
  // The agent of the bucket's project publishes, which need not be the topic's project.
  const [bucketMeta] = await bucket.getMetadata();
  const serviceAgent = await serviceAgentOf(storage, String(bucketMeta.projectNumber ?? request.project));

  const topicName = `projects/${request.project}/topics/${request.name}`;
  const subscriptionName = `projects/${request.project}/subscriptions/${request.name}`;
  const wakeSubscription = request.wake ? `${subscriptionName}-wake` : undefined;
  // What exists and would not deliver is refused before anything is made.
  const [configs] = await bucket.getNotifications();
  const onTopic = configs.filter((c) => c.metadata.topic === `//pubsub.googleapis.com/${topicName}`);
  let notification = onTopic.find((c) => delivers(c.metadata, request.prefix))?.id;
  const other = onTopic.find((c) => c.id !== notification);
  if (other)
    throw new NotifySetupError(
      `bucket ${request.bucket} already sends ${describeConfig(other.metadata)} to topic ${topicName} (notification config ${other.id})${notification ? ', besides the one this job needs: each object would be announced twice' : ", not what this job needs (new objects' resources, every name under the prefix)"}. Delete it (gcloud storage buckets notifications delete projects/_/buckets/${request.bucket}/notificationConfigs/${other.id}) and run this again, or choose another --name`,
    );
  const subscription = pubsub.subscription(subscriptionName);
  const subscriptionExists = (await subscription.exists())[0];
  const existing = subscriptionExists ? await expectTopic(subscription, topicName) : undefined;
  const wake = wakeSubscription ? pubsub.subscription(wakeSubscription) : undefined;
  const wakeExists = wake ? (await wake.exists())[0] : false;
  const existingWake = wake && wakeExists ? await expectTopic(wake, topicName) : undefined;

  const topic = pubsub.topic(topicName);
  if (!(await topic.exists())[0]) {
    await topic.create();
    created.push('topic');
  }
  if (!env.STORAGE_EMULATOR_HOST) {
    const [policy] = await topic.iam.getPolicy();
    const granted = withPublisher(policy, `serviceAccount:${serviceAgent}`);
    if (granted) {
      await topic.iam.setPolicy(granted);
      created.push('publisher grant');
    }
  }

  if (!subscriptionExists) {
    // A minute to read an object before Pub/Sub offers its notification again.
    await topic.createSubscription(subscriptionName, {
      ackDeadlineSeconds: 60,
      expirationPolicy: NEVER_EXPIRES,
      messageRetentionDuration: { seconds: RETENTION_SECONDS },
    });
    created.push('subscription');
  } else if (existing) {
    await keepSubscription(subscription, existing, 'subscription', { retention: true }, updated, warnings);
  }

  if (!notification) {
    const fresh = created.includes('topic') || created.includes('publisher grant');
    for (let attempt = 1; ; attempt++) {
      try {
        const [made] = await bucket.createNotification(topicName, {
          payloadFormat: 'JSON_API_V1',
          eventTypes: [FINALIZE],
          ...(request.prefix ? { objectNamePrefix: request.prefix } : {}),
        });
        notification = made.id!;
        break;
      } catch (err) {
        if (!fresh || attempt >= GRANT_TRIES || !notYetGranted(err)) throw err;
        options.onWait?.(
          `Cloud Storage cannot publish to ${topicName} yet (a new topic or grant takes a few seconds to spread): trying again in ${GRANT_WAIT_MS / 1000} s (${attempt}/${GRANT_TRIES - 1})`,
        );
        await (options.wait ?? ((ms) => sleep(ms)))(GRANT_WAIT_MS);
      }
    }
    created.push('notification config');
  }
  if (request.wake && wake && wakeSubscription) {
    const pushConfig = {
      pushEndpoint: wakeEndpoint(request.wake),
      ...(request.wake.serviceAccount
        ? // The runner's URL, as terraform sets it: Cloud Run checks the token was made for it.
          {
            oidcToken: {
              serviceAccountEmail: request.wake.serviceAccount,
              audience: runnerUrl(request.wake),
            },
          }
        : {}),
    };
    if (wakeExists) {
      await wake.modifyPushConfig(pushConfig);
      // Expired, it would wake the job no more, and the notifications would wait unread.
      if (existingWake)
        await keepSubscription(
          wake,
          existingWake,
          'wake subscription',
          { retention: false },
          updated,
          warnings,
        );
    } else {
      // Back-off for a wake that comes while the job runs (answered "later"): the run that
      // follows reads what is waiting.
      await topic.createSubscription(wakeSubscription, {
        ackDeadlineSeconds: 60,
        expirationPolicy: NEVER_EXPIRES,
        pushConfig,
        retryPolicy: { minimumBackoff: { seconds: 10 }, maximumBackoff: { seconds: 300 } },
      });
      created.push('wake subscription');
    }
  }
  return {
    bucket: request.bucket,
    topic: topicName,
    subscription: subscriptionName,
    notification,
    serviceAgent,
    ...(wakeSubscription ? { wakeSubscription } : {}),
    created,
    updated,
    warnings,
  };
}

interface SubscriptionMetadata {
  topic?: string | null;
  expirationPolicy?: { ttl?: { seconds?: unknown } | null } | null;
  messageRetentionDuration?: { seconds?: unknown } | null;
}

/**
 * Brings a subscription that existed up to what `notify` makes: never expires and (the job's
 * own) keeps notifications 7 days. What Pub/Sub refuses to change (the emulator cannot change
 * an expiration policy; an account may lack the right) is a warning with the command to run,
 * not a failure: the rest of the set-up stands.
 */
async function keepSubscription(
  subscription: ReturnType<PubSub['subscription']>,
  metadata: SubscriptionMetadata,
  label: string,
  { retention }: { retention: boolean },
  updated: string[],
  warnings: string[],
): Promise<void> {
  const name = subscription.name;
  const retained = Number(metadata.messageRetentionDuration?.seconds ?? 0);
  if (retention && retained < RETENTION_SECONDS) {
    try {
      await subscription.setMetadata({ messageRetentionDuration: { seconds: RETENTION_SECONDS } });
      updated.push(`${label} message retention: 7 days`);
    } catch (err) {
      warnings.push(
        `${label} ${name} keeps notifications ${retained ? `${retained} s` : 'less than 7 days'}: a job that does not run for longer loses the older ones, and could not change that (${errorMessage(err)}); run gcloud pubsub subscriptions update ${name} --message-retention-duration=7d`,
      );
    }
  }
  // No policy (the emulator's default) or one with a ttl (Pub/Sub's: 31 days) expires.
  if (!metadata.expirationPolicy || metadata.expirationPolicy.ttl) {
    try {
      await subscription.setMetadata({ expirationPolicy: NEVER_EXPIRES });
      updated.push(`${label} expiration: never`);
    } catch (err) {
      warnings.push(
        `${label} ${name} may expire (Pub/Sub deletes it after ${metadata.expirationPolicy?.ttl ? `${Number(metadata.expirationPolicy.ttl.seconds ?? 0) / 86_400} days` : 'a while'} without activity, and the notifications with it), and could not change that (${errorMessage(err)}); run gcloud pubsub subscriptions update ${name} --expiration-period=never`,
      );
    }
  }
}

/**
 * The policy with `member` allowed to publish, or undefined when it already is. Only a
 * binding without a condition counts, and only one is added to: a conditional grant might
 * not hold when Cloud Storage publishes.
 */
export function withPublisher<P extends { bindings?: PolicyBinding[] | null }>(
  policy: P,
  member: string,
): P | undefined {
  const bindings = policy.bindings ?? [];
  const binding = bindings.find((b) => b.role === PUBLISHER && !b.condition);
  if (binding?.members?.includes(member)) return undefined;
  const others = bindings.filter((b) => b !== binding);
  return {
    ...policy,
    bindings: [...others, { ...binding, role: PUBLISHER, members: [...(binding?.members ?? []), member] }],
  };
}

interface PolicyBinding {
  role?: string | null;
  members?: string[] | null;
  condition?: unknown;
}

/** Whether a config announces what the input reads: each new object under the prefix, with its resource. */
function delivers(config: NotificationMetadata, prefix: string | undefined): boolean {
  return (
    config.payload_format === 'JSON_API_V1' &&
    (config.object_name_prefix ?? '') === (prefix ?? '') &&
    (!config.event_types?.length || config.event_types.includes(FINALIZE))
  );
}

interface NotificationMetadata {
  topic?: string;
  payload_format?: string;
  event_types?: string[];
  object_name_prefix?: string;
}

function describeConfig(config: NotificationMetadata): string {
  const events = config.event_types?.length ? config.event_types.join(', ') : 'every event';
  const prefix = config.object_name_prefix ? ` of objects under ${config.object_name_prefix}` : '';
  return `${events}${prefix} (payload ${config.payload_format ?? 'JSON_API_V1'})`;
}

/** The subscription's metadata, once it is known to receive `topicName`. */
async function expectTopic(
  subscription: ReturnType<PubSub['subscription']>,
  topicName: string,
): Promise<SubscriptionMetadata> {
  const [metadata] = await subscription.getMetadata();
  if (metadata.topic !== topicName)
    throw new NotifySetupError(
      `subscription ${subscription.name} exists but receives ${metadata.topic === '_deleted-topic_' ? 'a deleted topic' : `topic ${metadata.topic}`}, not ${topicName}. Delete it (gcloud pubsub subscriptions delete ${subscription.name}) and run this again, or choose another --name`,
    );
  return metadata as SubscriptionMetadata;
}

/** `projects.serviceAccount.get` for the bucket's project (by number, as the bucket names it). */
async function serviceAgentOf(storage: Storage, project: string): Promise<string> {
  const response = await new Promise<{ email_address?: string }>((resolve, reject) =>
    storage.request({ uri: `/projects/${encodeURIComponent(project)}/serviceAccount` }, (err, body) =>
      err ? reject(err) : resolve(body as { email_address?: string }),
    ),
  );
  if (!response.email_address) throw new Error(`no service agent for project ${project}`);
  return response.email_address;
}

/**
 * Cloud Storage's answer while a grant has not reached it: 403, or 400 "topic ... not found,
 * or user ... does not have permission to it". Other refusals (a limit, a bad field) are final.
 */
function notYetGranted(err: unknown): boolean {
  const { code, message = '' } = err as { code?: unknown; message?: string };
  return code === 403 || (code === 400 && /not found|permission/i.test(message));
}

/** The runner's URL without a trailing slash: its pushes' audience, and the base of `/wake`. */
function runnerUrl(wake: WakeRequest): string {
  return wake.runnerUrl.replace(/\/+$/, '');
}

function errorMessage(err: unknown): string {
  return (err as { message?: string }).message ?? String(err);
}

/** `RUNNER_URL/wake?tenant=T&job=J` (shared/runs/wake.ts). */
export function wakeEndpoint(wake: WakeRequest): string {
  const url = new URL(`${runnerUrl(wake)}${WAKE_PATH}`);
  url.search = new URLSearchParams({ tenant: wake.tenant, job: wake.job }).toString();
  return url.toString();
}

/** Why the set-up stopped, and what it had made by then (kept: running again goes on). */
export class NotifySetupError extends Error {
  readonly created: string[];
  constructor(message: string, options: { created?: string[]; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.created = options.created ?? [];
  }
}
