/**
 * The worker's messages as server-sent events, for clients that cannot long-poll:
 * `POST /api/worker/stream-ticket` (bearer token) gives a single-use ticket valid 30 s,
 * `GET /api/worker/stream?ticket=...` opens the stream (an EventSource sends no headers,
 * and a token in a URL lands in request logs; see stream-tickets.ts). The stream keeps
 * the promise every token makes: it re-checks the credential at least every
 * CHECK_EVERY_MS (a rotated key or a deleted worker ends it within 5 s) and ends at the
 * token's expiry, each time with an `end` event saying why. Acknowledge messages with
 * `POST /api/worker/messages/ack` (the ack_id is in each event's data).
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, errors, json } from '../app/openapi-common.ts';
import { authServices, checkCredential } from '../auth/services.ts';
import type { PullMessages } from './messages.ts';
import { consumeStreamTicket, issueStreamTicket, TICKET_TTL_MS } from './stream-tickets.ts';

export const STREAM_PATH = '/worker/stream';
/** Below the 5 s revocation promise, with room for one credential read. */
const CHECK_EVERY_MS = 4_000;

export function registerWorkerStream(routes: OpenAPIHono<AppEnv>, deps: AppDeps, pull: PullMessages): void {
  const auth = authServices(deps);

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/stream-ticket',
      tags: ['worker'],
      summary: `A single-use ticket, valid ${TICKET_TTL_MS / 1000} s, that opens GET /api/worker/stream`,
      security: BEARER,
      responses: {
        201: json(z.object({ ticket: z.string(), expires_at: z.string() }), 'The ticket'),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const { ticket, expiresAt } = await issueStreamTicket(
        await deps.clients.firestore(),
        c.get('principal'),
      );
      return c.json({ ticket, expires_at: expiresAt.toISOString() }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: STREAM_PATH,
      tags: ['worker'],
      summary: 'The calling worker’s messages as server-sent events (`message`, `keepalive`, `end`)',
      request: {
        query: z.object({
          ticket: z
            .string()
            .max(100)
            .optional()
            .openapi({ description: 'From POST /api/worker/stream-ticket' }),
        }),
      },
      responses: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: z.string() } } },
        ...errors(401),
      },
    }),
    async (c) => {
      const { ticket } = c.req.valid('query');
      const others = [...new URL(c.req.url).searchParams.keys()].filter((k) => k !== 'ticket');
      if (others.length || !ticket)
        throw ApiError.unauthenticated(
          'open the stream with ?ticket= from POST /api/worker/stream-ticket; tokens are not accepted in the URL',
        );
      const grant = await consumeStreamTicket(await deps.clients.firestore(), ticket);
      if (!grant) throw ApiError.unauthenticated('the stream ticket is not valid, expired or used');
      const store = await auth.store();
      const standing = () => checkCredential(store, grant.claims);
      if (!(await standing()))
        throw ApiError.unauthenticated('the credential behind this ticket was revoked');
      const { tenant, sub: worker } = grant.claims;
      return streamSSE(c, async (stream) => {
        let open = true;
        stream.onAbort(() => {
          open = false;
        });
        const end = (reason: string) => stream.writeSSE({ event: 'end', data: JSON.stringify({ reason }) });
        while (open) {
          const left = grant.tokenExpiresAt - Date.now();
          if (left <= 0) return await end('the token expired; open a new stream with a new ticket');
          let messages: Record<string, unknown>[];
          try {
            messages = await pull(tenant, worker, Math.min(CHECK_EVERY_MS, left), 50);
          } catch (err) {
            return await end(err instanceof ApiError ? err.message : 'reading messages failed');
          }
          if (!open) return;
          // Messages pulled but not sent are not acknowledged: they come again.
          if (Date.now() >= grant.tokenExpiresAt)
            return await end('the token expired; open a new stream with a new ticket');
          if (!(await standing())) return await end('the credential behind this stream was revoked');
          if (!messages.length) await stream.writeSSE({ event: 'keepalive', data: '{}' });
          for (const message of messages)
            await stream.writeSSE({
              event: 'message',
              id: String(message.ack_id),
              data: JSON.stringify(message),
            });
        }
      }) as never;
    },
  );
}
