/**
 * What `sluice gcs notify BUCKET --job NAME` sets up, so that a `gcs` input can read the
 * bucket's new objects by notification (`notifications: {subscription}`): a Pub/Sub topic,
 * the right for the bucket's Cloud Storage service agent to publish to it, a subscription,
 * and the bucket's notification config (`OBJECT_FINALIZE`, payload `JSON_API_V1`, the
 * object resource the input reads). Each step keeps what exists, so running it again
 * changes nothing. With `STORAGE_EMULATOR_HOST` and `PUBSUB_EMULATOR_HOST` it sets up the
 * emulators (which have no IAM: that step is skipped).
 *
 * @example
 *   const setup = await setUpBucketNotifications({ bucket: 'landing', name: 'sluice-gcs-orders', project: 'p' });
 *   setup.subscription; // projects/p/subscriptions/sluice-gcs-orders
 */
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
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
  /** The push subscription that wakes the job (with `wake`). */
  wakeSubscription?: string;
  /** What this call made (the rest existed). */
  created: string[];
}

const PUBLISHER = 'roles/pubsub.publisher';

export async function setUpBucketNotifications(
  request: NotifyRequest,
  clients: { storage: Storage; pubsub: PubSub },
  env: NodeJS.ProcessEnv = process.env,
): Promise<NotifySetup> {
  const { storage, pubsub } = clients;
  const created: string[] = [];
  const bucket = storage.bucket(request.bucket);
  const [bucketExists] = await bucket.exists();
  if (!bucketExists)
    throw new NotifySetupError(`bucket ${request.bucket} does not exist (or this account cannot see it)`);

  const topicName = `projects/${request.project}/topics/${request.name}`;
  const topic = pubsub.topic(topicName);
  if (!(await topic.exists())[0]) {
    await topic.create();
    created.push('topic');
  }
  // Cloud Storage publishes as its service agent, which needs the right to on this topic.
  if (!env.STORAGE_EMULATOR_HOST) {
    const [agent] = await storage.getServiceAccount();
    const member = `serviceAccount:${agent.emailAddress}`;
    const [policy] = await topic.iam.getPolicy();
    const bindings = policy.bindings ?? [];
    const binding = bindings.find((b) => b.role === PUBLISHER);
    if (!binding?.members?.includes(member)) {
      if (binding) binding.members = [...(binding.members ?? []), member];
      else bindings.push({ role: PUBLISHER, members: [member] });
      await topic.iam.setPolicy({ ...policy, bindings });
      created.push('publisher grant');
    }
  }

  const subscriptionName = `projects/${request.project}/subscriptions/${request.name}`;
  const subscription = pubsub.subscription(subscriptionName);
  if (!(await subscription.exists())[0]) {
    // A minute to read an object before Pub/Sub offers its notification again.
    await topic.createSubscription(subscriptionName, { ackDeadlineSeconds: 60 });
    created.push('subscription');
  }

  const [configs] = await bucket.getNotifications();
  const existing = configs.find((config) => {
    const m = config.metadata as { topic?: string; payload_format?: string; object_name_prefix?: string };
    return (
      m.topic?.endsWith(topicName) &&
      m.payload_format === 'JSON_API_V1' &&
      (m.object_name_prefix ?? '') === (request.prefix ?? '')
    );
  });
  let notification = existing?.id;
  if (!notification) {
    const [made] = await bucket.createNotification(topicName, {
      payloadFormat: 'JSON_API_V1',
      eventTypes: ['OBJECT_FINALIZE'],
      ...(request.prefix ? { objectNamePrefix: request.prefix } : {}),
    });
    notification = made.id!;
    created.push('notification config');
  }
  let wakeSubscription: string | undefined;
  if (request.wake) {
    wakeSubscription = `${subscriptionName}-wake`;
    const wake = pubsub.subscription(wakeSubscription);
    const pushConfig = {
      pushEndpoint: wakeEndpoint(request.wake),
      ...(request.wake.serviceAccount
        ? { oidcToken: { serviceAccountEmail: request.wake.serviceAccount } }
        : {}),
    };
    if (!(await wake.exists())[0]) {
      // Back-off for a wake that comes while the job runs (answered "later"): the run that
      // follows reads what is waiting.
      await topic.createSubscription(wakeSubscription, {
        ackDeadlineSeconds: 60,
        pushConfig,
        retryPolicy: { minimumBackoff: { seconds: 10 }, maximumBackoff: { seconds: 300 } },
      });
      created.push('wake subscription');
    } else {
      await wake.modifyPushConfig(pushConfig);
    }
  }
  return {
    bucket: request.bucket,
    topic: topicName,
    subscription: subscriptionName,
    notification,
    ...(wakeSubscription ? { wakeSubscription } : {}),
    created,
  };
}

/** `RUNNER_URL/wake?tenant=T&job=J` (shared/runs/wake.ts). */
export function wakeEndpoint(wake: WakeRequest): string {
  const url = new URL(wake.runnerUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${WAKE_PATH}`;
  url.search = new URLSearchParams({ tenant: wake.tenant, job: wake.job }).toString();
  return url.toString();
}

/** A problem the operator can fix (exit 1 with the message). */
export class NotifySetupError extends Error {}
