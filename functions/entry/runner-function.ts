/**
 * The `runner` function: Pub/Sub pushes each run request of the `cloud` worker to it (the
 * push subscription `sluice-runs-runner`, terraform/runs.tf), and each request Pub/Sub gave
 * up on (`sluice-runs-dead-letters-runner`). A push subscription to an HTTP function rather
 * than an Eventarc Pub/Sub trigger: terraform then owns the subscription itself, its ack
 * deadline above the longest run, its retry back-off and its dead-letter policy, and the same
 * function serves both subscriptions. Cloud Run checks the push's OIDC token: only the push
 * identity may invoke the function.
 *
 * It also takes the object notifications that wake jobs without a trigger (`/wake`,
 * runs/wake.ts).
 *
 * Answers: 204 when the request is done with (run, not due, refused, delayed, not JSON at
 * all, or a dead letter reported), 500 when Pub/Sub should deliver it again: the run failed,
 * or the message is JSON but no valid run request (a part of too many objects), which is
 * thus dead-lettered and reported on its job rather than dropped (runs/pull-runner.ts,
 * `refuseInvalidRequest` and `handleDeadMessage`).
 *
 * @example
 *   export const handler = runnerFunction();
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PART_MAX_BYTES, parseRunRequest } from '../../shared/runs/run-request.ts';
import { WAKE_PATH, WakeTargetSchema } from '../../shared/runs/wake.ts';
import type { AppDeps } from '../app/deps.ts';
import { handleDeadMessage, refuseInvalidRequest } from '../runs/pull-runner.ts';
import { RUN_DEAD_LETTER_SUBSCRIPTION, RUN_MAX_DELIVERY_ATTEMPTS } from '../runs/run-channel.ts';
import { handleRunRequest } from '../runs/runner.ts';
import { handleNotificationWake } from '../runs/wake.ts';
import { cloudDeps } from './http-function.ts';

/** Pub/Sub's push body (https://cloud.google.com/pubsub/docs/push#receive_push). */
interface PushBody {
  message?: { data?: string; attributes?: Record<string, string>; messageId?: string };
  subscription?: string;
}

/**
 * Largest push body read (when no framework parsed it before): a run request is a few hundred
 * bytes, a part request up to PART_MAX_BYTES, in base64 inside the push's JSON.
 */
const MAX_BODY_BYTES = Math.ceil(PART_MAX_BYTES / 3) * 4 + 64 * 1024;

export function runnerFunction(deps: AppDeps = cloudDeps()) {
  const owner = `runner-${randomUUID()}`;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    // The pusher went away mid-body: there is no one to answer, and Pub/Sub pushes it again.
    if (body === CUT_OFF) return;
    const push = body as PushBody | undefined;
    const url = new URL(req.url ?? '/', 'http://runner');
    if (url.pathname.endsWith(WAKE_PATH)) return await wake(deps, url.searchParams, res, push);
    const data = Buffer.from(push?.message?.data ?? '', 'base64');
    const message = push?.message?.messageId;
    if (push?.subscription?.endsWith(`/${RUN_DEAD_LETTER_SUBSCRIPTION}`)) {
      const count = Number(push.message?.attributes?.CloudPubSubDeadLetterSourceDeliveryCount);
      try {
        await handleDeadMessage(deps, data, count > 0 ? count : RUN_MAX_DELIVERY_ATTEMPTS, message);
        return reply(res, 204);
      } catch (err) {
        deps.logger.error(
          { err, message },
          'a dead-lettered run request could not be reported; Pub/Sub will retry',
        );
        return reply(res, 500);
      }
    }
    const parsed = parseRunRequest(data);
    if (!parsed.ok)
      return reply(res, refuseInvalidRequest(deps.logger, parsed.error, { message }) ? 204 : 500);
    try {
      const answer = await handleRunRequest(deps, parsed.request, { owner });
      reply(res, answer.ack ? 204 : 500);
    } catch (err) {
      deps.logger.error(
        { err, job: parsed.request.job },
        'a run request could not be handled; Pub/Sub will retry',
      );
      reply(res, 500);
    }
  };
}

/**
 * Object notifications of a job without a trigger, pushed by the wake subscription that
 * `sluice gcs notify --wake` makes (`RUNNER_URL/wake?tenant=T&job=J`): 204 when done with,
 * 500 when a run of the job is going on (Pub/Sub brings the notification back later).
 */
async function wake(deps: AppDeps, query: URLSearchParams, res: ServerResponse, push: PushBody | undefined) {
  const target = WakeTargetSchema.safeParse({ tenant: query.get('tenant'), job: query.get('job') });
  if (!target.success) {
    deps.logger.warn({ message: push?.message?.messageId }, 'a wake push names no job; dropped');
    return reply(res, 204);
  }
  try {
    const { ack, decision } = await handleNotificationWake(deps, target.data);
    deps.logger.debug({ job: target.data.job, decision }, 'notification wake');
    reply(res, ack ? 204 : 500);
  } catch (err) {
    deps.logger.error(
      { err, job: target.data.job },
      'a notification wake could not be handled; Pub/Sub will retry',
    );
    reply(res, 500);
  }
}

/** What readBody gives for a body whose sender went away before its end. */
const CUT_OFF = Symbol('cut off');

async function readBody(req: IncomingMessage): Promise<unknown> {
  // Cloud Functions' framework has parsed JSON bodies already.
  const parsed = (req as IncomingMessage & { body?: unknown }).body;
  if (parsed !== undefined && !Buffer.isBuffer(parsed)) return parsed;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return undefined;
      chunks.push(chunk as Buffer);
    }
  } catch {
    return CUT_OFF;
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}
