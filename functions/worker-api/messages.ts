/**
 * `GET /api/worker/messages?wait=25s` and `POST /api/worker/messages/ack`: a worker
 * reads its own Pub/Sub subscription through the API (it holds no cloud credentials).
 * The same messages as server-sent events: functions/worker-api/stream.ts.
 * The read is a synchronous pull that waits up to `wait` for messages; delivery is at
 * least once until acknowledged. Messages for other workers (the emulator ignores
 * subscription filters) are acknowledged and dropped here.
 */

import type { OpenAPIHono } from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { parseDuration } from '../../shared/duration.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { isForWorker, workerSubscriptionName } from '../messaging/worker-channel.ts';

const MAX_WAIT_MS = 55_000;

interface PullClient {
  pull(request: object, options?: object): Promise<[{ receivedMessages?: ReceivedMessage[] | null }]>;
  acknowledge(request: object): Promise<unknown>;
}
interface ReceivedMessage {
  ackId?: string | null;
  message?: { data?: Uint8Array | string | null; attributes?: Record<string, string> | null } | null;
}

/** Waits up to `waitMs` for a worker's messages, each with its `ack_id`. */
export type PullMessages = (
  tenant: string,
  worker: string,
  waitMs: number,
  max: number,
) => Promise<Record<string, unknown>[]>;

export function registerWorkerMessages(routes: OpenAPIHono<AppEnv>, deps: AppDeps): PullMessages {
  let client: Promise<PullClient> | undefined;
  const subscriber = () => {
    client ??= deps.clients
      .pubsub()
      .then((ps) => ps.getClientAsync_({ client: 'SubscriberClient' }) as unknown as PullClient);
    return client;
  };
  const subscriptionPath = (tenant: string, worker: string) =>
    `projects/${deps.config.projectId}/subscriptions/${workerSubscriptionName(tenant, worker)}`;

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/worker/messages',
      tags: ['worker'],
      summary: 'Long poll of the calling worker’s messages (events); acknowledge them after handling',
      security: BEARER,
      request: {
        query: z.object({
          wait: z.string().max(16).default('25s'),
          max: z.coerce.number().int().min(1).max(100).default(50),
        }),
      },
      responses: {
        200: json(
          z.object({ messages: z.array(z.record(z.string(), z.unknown())) }),
          'Messages, each with an ack_id',
        ),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const { wait, max } = c.req.valid('query');
      let waitMs: number;
      try {
        waitMs = Math.min(parseDuration(wait), MAX_WAIT_MS);
      } catch (err) {
        throw ApiError.invalid(`wait: ${(err as Error).message}`, [
          { path: 'wait', message: (err as Error).message },
        ]);
      }
      const { tenant, subject: worker } = c.get('principal');
      return c.json({ messages: await pullMessages(tenant, worker, waitMs, max) }, 200);
    },
  );

  /** Waits up to `waitMs` for this worker's messages; drops (acks) ones meant for others. */
  async function pullMessages(tenant: string, worker: string, waitMs: number, max: number) {
    const client = await subscriber();
    const deadline = Date.now() + waitMs;
    const subscription = subscriptionPath(tenant, worker);
    for (;;) {
      const remaining = deadline - Date.now();
      let received: ReceivedMessage[] = [];
      try {
        const [answer] = await client.pull(
          { subscription, maxMessages: max, returnImmediately: false },
          { timeout: Math.max(1_000, Math.min(remaining, 20_000)), retry: null },
        );
        received = answer.receivedMessages ?? [];
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 5)
          throw ApiError.notFound('this worker has no message subscription; recreate or re-enroll it');
        if (code !== 4) throw err; // DEADLINE_EXCEEDED: nothing arrived in time
      }
      const foreign = received.filter((m) => !isForWorker(m.message?.attributes ?? {}, tenant, worker));
      if (foreign.length) await client.acknowledge({ subscription, ackIds: foreign.map((m) => m.ackId) });
      const mine = received.filter((m) => !foreign.includes(m));
      if (mine.length || Date.now() >= deadline - 500) {
        return mine.map((m) => ({
          ack_id: m.ackId!,
          ...(JSON.parse(Buffer.from(m.message?.data ?? '').toString('utf8')) as Record<string, unknown>),
        }));
      }
    }
  }

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/messages/ack',
      tags: ['worker'],
      summary: 'Acknowledge handled messages',
      security: BEARER,
      request: body(z.strictObject({ ack_ids: z.array(z.string().min(1).max(1000)).min(1).max(1000) })),
      responses: { 204: noContent('Acknowledged'), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { ack_ids } = c.req.valid('json');
      const { tenant, subject: worker } = c.get('principal');
      try {
        await (await subscriber()).acknowledge({
          subscription: subscriptionPath(tenant, worker),
          ackIds: ack_ids,
        });
      } catch (err) {
        // Pub/Sub refuses the whole request (INVALID_ARGUMENT) when an id is malformed or
        // belongs to another subscription: a client's mistake, not the server's.
        if ((err as { code?: number }).code === 3) throw unknownAckIds();
        if ((err as { code?: number }).code === 5)
          throw ApiError.notFound('this worker has no message subscription; recreate or re-enroll it');
        throw err;
      }
      return c.body(null, 204);
    },
  );
  return pullMessages;
}

function unknownAckIds(): ApiError {
  const message =
    'an ack id is malformed or not one of this worker’s messages (ack ids come from GET /api/worker/messages)';
  return ApiError.invalid(`invalid request body: ${message}`, [{ path: 'ack_ids', message }]);
}
