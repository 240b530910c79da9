/**
 * `GET /api/events` (viewer): the event log, filtered by type, job, worker, source and
 * time, newest last, in pages with an opaque cursor. Payloads that workers wrote are
 * shown whole to operators and admins only (shared/events/visibility.ts).
 *
 * `order=newest` (a Sluice extension) pages the other way: newest first, each cursor
 * going further back, down to `since`. Readers that want the latest N events (the CLI's
 * `events ls`, the web UI's first load, output metrics) ask for them at once instead of
 * paging through everything older.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { EventPage, EventView } from '../../shared/api/events.ts';
import { allows } from '../../shared/auth/roles.ts';
import { ApiError } from '../../shared/errors.ts';
import { eventIdTime } from '../../shared/events/event-id.ts';
import { forViewer } from '../../shared/events/visibility.ts';
import { EVENT_SOURCES, isEventType } from '../../shared/events/vocabulary.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, errors, json } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { eventsCollection } from './event-log.ts';

const Query = z.object({
  type: z
    .string()
    .max(2000)
    .optional()
    .openapi({ description: 'Comma-separated event types', example: 'job-deployed,job-staged' }),
  job: z.string().max(128).optional(),
  worker: z.string().max(128).optional(),
  source: z.enum(EVENT_SOURCES).optional(),
  since: z.iso.datetime().optional().openapi({ description: 'RFC 3339; only events at or after this time' }),
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  order: z.enum(['oldest', 'newest']).default('oldest').openapi({
    description:
      'oldest: oldest first, the cursor pages towards now (the contract). newest: newest first, the cursor pages back in time, down to since (a Sluice extension).',
  }),
});

const Event = EventView.openapi('Event');

/**
 * An event id as the log makes them (event-log.ts): the time to the millisecond, `-`, then
 * a sequence and randomness (12 characters; 12 hex digits in ids made before the sequence).
 */
const EVENT_ID = /^\d{17}-[0-9a-z]{12,}$/;

/** A cursor is the id of the last event of a page, base64url: opaque to clients. */
function encodeCursor(id: string): string {
  return Buffer.from(id).toString('base64url');
}

/**
 * The id a cursor holds. One that is not ours (cut short, altered, made up) is a 400: read
 * as a position, it would end the paging early or restart it somewhere else, unnoticed.
 */
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString();
  if (EVENT_ID.test(id) && encodeCursor(id) === cursor) return id;
  throw ApiError.invalid(
    'cursor is not a position in the event log (cut short or altered?): start again without cursor, or pass the next_cursor of the previous page as it came',
    [{ path: 'cursor', message: 'not a cursor of this log' }],
  );
}

export function eventsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/events', authenticate(deps), requireRole('viewer'));

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/events',
      tags: ['events'],
      summary: 'Events, oldest first (or newest first with order=newest), with a cursor for the next page',
      security: BEARER,
      request: { query: Query },
      responses: {
        200: json(EventPage.extend({ events: z.array(Event) }), 'Events'),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const types = q.type
        ? q.type
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
        : [];
      const unknown = types.filter((t) => !isEventType(t));
      if (unknown.length)
        throw ApiError.invalid(`unknown event type(s): ${unknown.join(', ')}`, [
          { path: 'type', message: 'not an event type' },
        ]);
      if (types.length > 30)
        throw ApiError.invalid('at most 30 types per query', [{ path: 'type', message: 'at most 30' }]);
      const newest = q.order === 'newest';
      let query = eventsCollection(await deps.clients.firestore(), c.get('principal').tenant).orderBy(
        'id',
        newest ? 'desc' : 'asc',
      );
      if (types.length) query = query.where('type', 'in', types);
      if (q.job) query = query.where('job', '==', q.job);
      if (q.worker) query = query.where('worker', '==', q.worker);
      if (q.source) query = query.where('source', '==', q.source);
      const after = q.cursor ? decodeCursor(q.cursor) : undefined;
      // An id begins with its time, so the time alone sorts before every id of that instant.
      const since = q.since ? eventIdTime(new Date(q.since)) : undefined;
      if (newest) {
        if (after) query = query.startAfter(after);
        if (since) query = query.endAt(since);
      } else {
        const start = [after, since]
          .filter((x): x is string => !!x)
          .sort()
          .pop();
        if (start) query = after && start === after ? query.startAfter(start) : query.startAt(start);
      }
      const snap = await query.limit(q.limit + 1).get();
      const docs = snap.docs.slice(0, q.limit);
      const whole = allows(c.get('principal').roles, 'operator');
      const events = docs.map((d) => {
        // `expires_at` is the TTL policy's business, not part of the event.
        const { expires_at: _, ...event } = d.data() as z.infer<typeof Event> & { expires_at?: unknown };
        return whole ? event : forViewer(event);
      });
      const next = snap.docs.length > q.limit ? encodeCursor(events[events.length - 1]!.id) : null;
      return c.json({ events, next_cursor: next }, 200);
    },
  );

  return { name: 'events', routes };
}
