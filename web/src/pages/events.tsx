/**
 * Events, live: filtered by type, job and worker (kept in the address, so a filtered
 * view can be shared), refreshed every 1.5 s while "Live" is on.
 */
import { useState } from 'preact/hooks';
import { EVENT_TYPES } from '../../../shared/events/vocabulary.ts';
import { ErrorMessage } from '../components/error-message.tsx';
import { EventsTable } from '../components/events-table.tsx';
import { type EventFilters, useEventFeed } from '../lib/use-event-feed.ts';
import { navigate } from '../router.tsx';

export function EventsPage({ query }: { query: URLSearchParams }) {
  const filters: EventFilters = {
    type: query.get('type') ?? '',
    job: query.get('job') ?? '',
    worker: query.get('worker') ?? '',
  };
  const [draft, setDraft] = useState(filters);
  const [live, setLive] = useState(true);
  const feed = useEventFeed(filters, { live });

  const apply = (e: Event) => {
    e.preventDefault();
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(draft))
      if (v?.trim()) params.set(k, v.trim().replace(/\s*,\s*/g, ','));
    const qs = params.toString();
    navigate(qs ? `/events?${qs}` : '/events');
  };
  const set = (k: keyof EventFilters) => (e: Event) =>
    setDraft({ ...draft, [k]: (e.currentTarget as HTMLInputElement).value });

  return (
    <>
      <h1>Events</h1>
      <form class="filters" onSubmit={apply} aria-label="Filter events">
        <div class="field">
          <label for="filter-type">Type</label>
          <input
            id="filter-type"
            list="event-types"
            placeholder="e.g. job-deployed,context-changed"
            value={draft.type}
            onInput={set('type')}
            autocomplete="off"
          />
          <datalist id="event-types">
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for="filter-job">Job</label>
          <input id="filter-job" value={draft.job} onInput={set('job')} autocomplete="off" />
        </div>
        <div class="field">
          <label for="filter-worker">Worker</label>
          <input id="filter-worker" value={draft.worker} onInput={set('worker')} autocomplete="off" />
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Filter
          </button>
          <label class="check">
            <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
          </label>
        </div>
      </form>
      <ErrorMessage error={feed.error} />
      <p class="status" role="status" aria-live="polite">
        {feed.loaded ? `${feed.events.length} events${live ? ', updating live' : ''}` : 'Loading events…'}
      </p>
      <EventsTable events={feed.events} caption="Events, newest first" />
    </>
  );
}
