/**
 * A runner that pulls its run requests: what the local stack's runner processes run
 * (`SLUICE_RUNNERS`, local/runners.ts), and what tests drive. In the cloud Pub/Sub pushes
 * the same requests to the runner function instead (entry/runner-function.ts); both end in
 * `handleRunRequest`, and requests Pub/Sub dead-letters in `handleDeadMessage`. A message
 * that is JSON but no valid run request (a part of more objects than a part may carry) is
 * refused like a failed run, never acknowledged unseen: see `refuseInvalidRequest`.
 *
 * It pulls only as many requests as it has free slots (`concurrency`; runs mostly wait on
 * storage and networks), with synchronous pulls rather than a streaming pull: the emulator
 * ignores a streaming subscriber's flow control and hands every waiting request to the first
 * runner, which would then run them one after the other while the other runners idle.
 * Requests in hand have their ack deadline extended until they are answered, so only a
 * runner that died lets them go back to the queue.
 *
 * A pull answers at once, empty when there is nothing (one that waited for requests would
 * hold stop(), and the emulator hands requests to a waiting pull even after its caller
 * cancelled it, where they sit out their ack deadline). After an empty answer the runner
 * pauses, twice as long each time up to IDLE_PAUSE_MAX_MS, and back to EMPTY_PAUSE_MS once
 * a request comes: pausing 100 ms every time made two idle runners and the Pub/Sub
 * emulator use about a quarter of a core between them while the local stack sat idle.
 *
 * @example
 *   const runner = await startPullRunner(deps, { owner: 'runner-1', concurrency: 4 });
 *   await runner.idle(500);
 *   await runner.stop();
 */
import type { PubSub } from '@google-cloud/pubsub';
import { z } from 'zod';
import { parseDuration } from '../../shared/duration.ts';
import { parseRunRequest, type RunRequest } from '../../shared/runs/run-request.ts';
import type { AppDeps } from '../app/deps.ts';
import type { Logger } from '../app/logger.ts';
import {
  ensureRunChannel,
  RUN_ACK_DEADLINE_SECONDS,
  RUN_DEAD_LETTER_SUBSCRIPTION,
  RUN_MAX_DELIVERY_ATTEMPTS,
  RUN_SUBSCRIPTION,
} from './run-channel.ts';
import { handleDeadRunRequest, handleRunRequest, type RunAnswer, type RunnerContext } from './runner.ts';

export interface PullRunnerOptions extends RunnerContext {
  concurrency?: number;
  /** Called with each request's answer (tests, benchmarks). */
  onAnswer?(answer: RunAnswer): void;
  /** Called as each pull is sent (tests: how often an idle runner asks). */
  onPull?(): void;
}

export interface PullRunner {
  /** Resolves once no request has been in hand for `quietMs`. */
  idle(quietMs: number): Promise<void>;
  stop(): Promise<void>;
}

interface Received {
  ackId?: string | null;
  /** How often Pub/Sub has delivered it, this time included (subscriptions with a dead-letter policy). */
  deliveryAttempt?: number | null;
  message?: {
    data?: Uint8Array | string | null;
    attributes?: Record<string, string> | null;
    messageId?: string | null;
  } | null;
}

/** How long to wait before pulling again when the queue was empty: at first, and at most. */
const EMPTY_PAUSE_MS = 100;
const IDLE_PAUSE_MAX_MS = 1_000;

export async function startPullRunner(deps: AppDeps, options: PullRunnerOptions): Promise<PullRunner> {
  const pubsub = await deps.clients.pubsub();
  await ensureRunChannel(pubsub);
  const { v1 } = await import('@google-cloud/pubsub');
  // The PubSub client's options point at the emulator when PUBSUB_EMULATOR_HOST is set.
  const client = new v1.SubscriberClient(
    (pubsub as PubSub & { options: object }).options as ConstructorParameters<typeof v1.SubscriberClient>[0],
  );

  const concurrency = options.concurrency ?? 4;
  const backoffSeconds = parseDuration(deps.config.runRetryBackoff) / 1000;
  let inHand = 0;
  let lastActivity = Date.now();
  let stopped = false;
  const wakers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakers.add(wake);
    });

  /** Pulls from one subscription while the runner runs, each request handled by `work`. */
  const loop = async (name: string, work: (received: Received) => Promise<boolean>, slots: number) => {
    const subscription = pubsub.subscription(name).name;
    let mine = 0;
    let emptyPause = EMPTY_PAUSE_MS;
    while (!stopped) {
      if (mine >= slots) {
        await pause(20);
        continue;
      }
      let received: Received[];
      options.onPull?.();
      try {
        // Answered at once even when there is nothing (then it pauses a moment): a pull that
        // waited for requests would hold stop() until its timeout. Discouraged against the
        // service, where few answers could come back empty; this runner pulls from the
        // emulator only (the cloud pushes).
        const [response] = await client.pull(
          { subscription, maxMessages: slots - mine, returnImmediately: true },
          { timeout: 10_000 },
        );
        received = (response.receivedMessages ?? []) as Received[];
      } catch (err) {
        if (!stopped)
          deps.logger.warn({ err, subscription: name }, 'run requests: pull failed; trying again');
        await pause(1_000);
        continue;
      }
      if (stopped) {
        // Pulled while stopping: back to the queue at once, for another runner.
        const ackIds = received.map((r) => r.ackId!);
        if (ackIds.length)
          await client.modifyAckDeadline({ subscription, ackIds, ackDeadlineSeconds: 0 }).catch(() => {});
        return;
      }
      if (received.length === 0) {
        await pause(emptyPause);
        emptyPause = Math.min(emptyPause * 2, IDLE_PAUSE_MAX_MS);
        continue;
      }
      emptyPause = EMPTY_PAUSE_MS;
      for (const request of received) {
        mine++;
        inHand++;
        lastActivity = Date.now();
        const ackIds = [request.ackId!];
        const extend = setInterval(
          () => {
            void client
              .modifyAckDeadline({ subscription, ackIds, ackDeadlineSeconds: RUN_ACK_DEADLINE_SECONDS })
              .catch(() => {});
          },
          (RUN_ACK_DEADLINE_SECONDS * 1000) / 3,
        );
        void work(request)
          .catch((err) => {
            deps.logger.error(
              { err, subscription: name },
              'a run request could not be handled; it comes back',
            );
            return false;
          })
          .then((ack) =>
            ack
              ? client.acknowledge({ subscription, ackIds })
              : client.modifyAckDeadline({
                  subscription,
                  ackIds,
                  ackDeadlineSeconds: retryDelaySeconds(backoffSeconds, request.deliveryAttempt),
                }),
          )
          .catch((err) => deps.logger.warn({ err }, 'run requests: could not answer Pub/Sub'))
          .finally(() => {
            clearInterval(extend);
            mine--;
            inHand--;
            lastActivity = Date.now();
          });
      }
    }
  };

  const loops = [
    loop(
      RUN_SUBSCRIPTION,
      async (received) => {
        const parsed = parseRunRequest(received.message?.data ?? '');
        if (!parsed.ok)
          return refuseInvalidRequest(deps.logger, parsed.error, {
            message: received.message?.messageId ?? undefined,
            attempt: received.deliveryAttempt ?? undefined,
          });
        const started = Date.now();
        deps.logger.debug(
          { job: parsed.request.job, reason: parsed.request.reason, attempt: received.deliveryAttempt },
          'run request received',
        );
        const answer = await handleRunRequest(deps, parsed.request, options);
        deps.logger.debug(
          {
            job: parsed.request.job,
            reason: parsed.request.reason,
            outcome: answer.outcome,
            ack: answer.ack,
            ms: Date.now() - started,
            waited_ms: started - parsed.request.requested_ms,
          },
          'run request answered',
        );
        options.onAnswer?.(answer);
        return answer.ack;
      },
      concurrency,
    ),
    loop(
      RUN_DEAD_LETTER_SUBSCRIPTION,
      async (received) => {
        await handleDeadMessage(
          deps,
          received.message?.data ?? '',
          deadLetterAttempts(received),
          received.message?.messageId ?? undefined,
        );
        return true;
      },
      1,
    ),
  ];
  return {
    async idle(quietMs) {
      while (inHand > 0 || Date.now() - lastActivity < quietMs) {
        await new Promise((r) => setTimeout(r, Math.max(20, quietMs / 5)));
      }
    },
    async stop() {
      stopped = true;
      for (const wake of wakers) wake();
      // No request is taken after this (a pull answers at once, see above); those in hand
      // finish (their runs stop at their budgets) and are answered.
      await Promise.all(loops);
      while (inHand > 0) await new Promise((r) => setTimeout(r, 20));
      await client.close();
    },
  };
}

/** Pub/Sub records how often it delivered a dead-lettered message in its attributes. */
function deadLetterAttempts(received: Received): number {
  const n = Number(received.message?.attributes?.CloudPubSubDeadLetterSourceDeliveryCount);
  return Number.isFinite(n) && n > 0 ? n : RUN_MAX_DELIVERY_ATTEMPTS;
}

/**
 * What a runner answers to a message of `sluice-runs` that is no run request; true:
 * acknowledge it. Not JSON at all, it names no job and never will: dropped. JSON that the
 * schema refuses (a part of more than PART_MAX_OBJECTS objects, from a deployment whose
 * shard_objects was larger; a field this version does not know) is refused like a failed
 * run: Pub/Sub delivers it again and, after its delivery attempts, dead-letters it, where
 * `handleDeadMessage` reports it on the job it names (a part then still ends its run).
 * Acknowledged, a part would be lost and its run would never end. Logged as a warning with
 * the reason either way.
 */
export function refuseInvalidRequest(
  logger: Logger,
  error: string,
  context: { message?: string | undefined; attempt?: number | undefined },
): boolean {
  if (error === 'not JSON') {
    logger.warn({ error, ...context }, 'not a run request; dropped');
    return true;
  }
  logger.warn({ error, ...context }, 'not a valid run request; refused (Pub/Sub dead-letters it)');
  return false;
}

/**
 * A message of the dead-letter subscription, acknowledged once handled: a run request whose
 * runs failed every delivery (`handleDeadRunRequest` reports it), or one refused every time
 * as no valid run request (`refuseInvalidRequest`). That one is reported the same way on the
 * job it names, when it names one, so that a part still counts towards its run's end
 * (`failed_parts`); logged as a warning with the reason, with or without a job.
 */
export async function handleDeadMessage(
  deps: AppDeps,
  data: string | Uint8Array,
  attempts: number,
  message?: string,
): Promise<void> {
  const parsed = parseRunRequest(data);
  if (parsed.ok) return await handleDeadRunRequest(deps, parsed.request, attempts);
  const named = namedJob(data);
  deps.logger.warn(
    {
      error: parsed.error,
      tenant: named?.tenant,
      job: named?.job,
      part: named?.part?.index,
      attempts,
      message,
    },
    named
      ? 'an invalid run request was dead-lettered; reported on its job'
      : 'an invalid run request was dead-lettered; it names no job: dropped',
  );
  if (named) await handleDeadRunRequest(deps, named, attempts);
}

/** The job (and part) an invalid request names: all a dead-letter report needs of it. */
const NamedJobSchema = z.object({
  tenant: z.string().min(1).max(128),
  job: z.string().min(1).max(128),
  part: z
    .object({ run: z.string().min(1).max(64), index: z.number().int().nonnegative() })
    .optional()
    .catch(undefined),
});

function namedJob(data: string | Uint8Array): RunRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
  const named = NamedJobSchema.safeParse(value);
  if (!named.success) return undefined;
  const { tenant, job, part } = named.data;
  // Not run: only its tenant, job and part are read (handleDeadRunRequest).
  return part
    ? { tenant, job, version: 0, requested_ms: 0, reason: 'part', part: { ...part, objects: [] } }
    : { tenant, job, version: 0, requested_ms: 0, reason: 'due' };
}

/** The cloud's retry policy's longest wait (terraform/runs.tf `maximum_backoff`). */
const MAX_RETRY_BACKOFF_SECONDS = 600;

/**
 * How long a request that failed its `attempt`th delivery waits before Pub/Sub delivers it
 * again: `firstSeconds`, doubled with each delivery, at most 10 minutes. Without it the
 * emulator delivered a failing run again at once, five times within two seconds.
 */
export function retryDelaySeconds(firstSeconds: number, attempt: number | null | undefined): number {
  if (firstSeconds <= 0) return 0;
  const doublings = Math.max(0, (attempt ?? 1) - 1);
  return Math.round(Math.min(MAX_RETRY_BACKOFF_SECONDS, firstSeconds * 2 ** Math.min(doublings, 10)));
}
