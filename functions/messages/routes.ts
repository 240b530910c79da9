/**
 * `POST /api/messages` (operator): a user message (`user-generated`, `user-alert` or
 * `user-notification`) recorded in the event log and delivered to workers (all of the
 * tenant's, or one), where `message`-triggered inputs whose filters match run. A message
 * to a worker that does not exist is a 404 (as a deploy to it is refused), and nothing is sent.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { WorkerId } from '../../shared/auth/name-schemas.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { EventPayload } from './payload.ts';
import { sendMessage } from './send.ts';

const Message = z
  .strictObject({
    type: z.enum(['user-generated', 'user-alert', 'user-notification']).default('user-generated'),
    tags: z.array(z.string().min(1).max(128)).max(32).default([]),
    payload: EventPayload.default({}),
    job: z.string().max(128).optional(),
    worker: WorkerId.optional().openapi({
      description:
        'Deliver to this worker only (default: every worker); a worker that does not exist is a 404',
    }),
  })
  .openapi('Message');

export function messagesFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/messages', authenticate(deps), requireRole('operator'));

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/messages',
      tags: ['messages'],
      summary: 'Send a user message to workers (for message-triggered inputs)',
      security: BEARER,
      request: body(Message),
      responses: { 201: json(z.object({ id: z.string() }), 'Sent'), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const event = await sendMessage(deps, c.get('principal').tenant, input);
      return c.json({ id: event.id }, 201);
    },
  );

  return { name: 'messages', routes };
}
