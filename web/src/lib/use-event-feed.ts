/**
 * A live view of the event log: loads the newest `keep` events of the last day that match
 * the filters (`order=newest`, one request however busy the log), then polls
 * `GET /api/events` every 1.5 s for newer ones. It follows `next_cursor` while a page is
 * full (at most MAX_PAGES_PER_POLL pages a poll, then on at the next), and otherwise asks
 * again from a little before the newest event (`EventTail`: an event that commits late
 * still shows, in its place by time, and none shows twice). Keeps the newest `keep` events.
 *
 * @example
 *   const feed = useEventFeed({ worker: 'local' }, { live: true });
 */
import { useEffect, useState } from 'preact/hooks';
import { EventTail } from '../../../shared/events/tail.ts';
import { api, withQuery } from '../api.ts';

export interface SluiceEvent {
  id: string;
  type: string;
  kind: string;
  source: string;
  worker?: string;
  job?: string;
  tags?: string[];
  time: string;
  payload: Record<string, unknown>;
}

export interface EventFilters {
  type?: string;
  job?: string;
  worker?: string;
}

const POLL_MS = 1500;
const PAGE = 500;
/** The most events one request answers (functions/events/routes.ts). */
const PAGE_MAX = 1000;
const MAX_PAGES_PER_POLL = 10;
const LOOKBACK_MS = 24 * 60 * 60 * 1000;

export function useEventFeed(filters: EventFilters, options: { live: boolean; keep?: number }) {
  const keep = options.keep ?? 300;
  const [events, setEvents] = useState<SluiceEvent[]>([]);
  const [error, setError] = useState<Error | undefined>();
  const [loaded, setLoaded] = useState(false);
  const key = JSON.stringify(filters);

  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    let cursor: string | undefined;
    const tail = new EventTail(new Date(Date.now() - LOOKBACK_MS));
    let all: SluiceEvent[] = [];
    let started = false;
    setEvents([]);
    setLoaded(false);
    setError(undefined);

    const poll = async () => {
      try {
        if (!started) {
          // The newest first, so a busy day does not show its oldest hours while it catches up.
          const newest = await api.get<{ events: SluiceEvent[] }>(
            withQuery('/api/events', {
              ...filters,
              order: 'newest',
              limit: Math.min(keep, PAGE_MAX),
              since: tail.since(),
            }),
          );
          all = tail.fresh([...newest.events].reverse());
          started = true;
          if (!stopped) setEvents(all);
        }
        for (let i = 0; i < MAX_PAGES_PER_POLL && !stopped; i++) {
          const page = await api.get<{ events: SluiceEvent[]; next_cursor: string | null }>(
            withQuery('/api/events', {
              ...filters,
              limit: PAGE,
              ...(cursor ? { cursor } : { since: tail.since() }),
            }),
          );
          const fresh = tail.fresh(page.events);
          if (fresh.length && !stopped) {
            // Ids sort by time: a late event goes in its place, not at the end.
            all = [...all, ...fresh].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(-keep);
            setEvents(all);
          }
          cursor = page.next_cursor ?? undefined;
          if (!cursor) break;
        }
        if (!stopped) setError(undefined);
      } catch (err) {
        if (!stopped) setError(err as Error);
      } finally {
        if (!stopped) {
          setLoaded(true);
          if (options.live) timer = window.setTimeout(poll, POLL_MS);
        }
      }
    };
    void poll();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [key, options.live, keep]);

  return { events, error, loaded };
}
