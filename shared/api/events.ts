/**
 * The shape of an event as `GET /api/events` answers it (CONTRACT section 5), and of a page
 * of them, declared once for the route, the web UI and the CLI.
 */
import { z } from 'zod';

export const EventView = z.object({
  id: z.string(),
  type: z.string(),
  kind: z.string(),
  source: z.string(),
  worker: z.string().optional(),
  job: z.string().optional(),
  tags: z.array(z.string()).optional(),
  time: z.string(),
  payload: z.record(z.string(), z.unknown()),
});

export const EventPage = z.object({ events: z.array(EventView), next_cursor: z.string().nullable() });

export type EventView = z.infer<typeof EventView>;
export type EventPage = z.infer<typeof EventPage>;
