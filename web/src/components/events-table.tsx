/** Events, newest first: time, type, source, job, worker and the payload (expandable JSON). */
import type { SluiceEvent } from '../lib/use-event-feed.ts';
import { Link } from '../router.tsx';
import { EmptyRow, TableHead } from './table.tsx';

export function EventsTable({ events, caption }: { events: SluiceEvent[]; caption: string }) {
  const newestFirst = [...events].reverse();
  return (
    <table class="events">
      <caption>{caption}</caption>
      <TableHead columns={['Time', 'Type', 'Source', 'Job', 'Worker', 'Payload']} />
      <tbody>
        {newestFirst.length === 0 && <EmptyRow span={6}>No events.</EmptyRow>}
        {newestFirst.map((e) => (
          <tr key={e.id} data-type={e.type}>
            <td>
              <time dateTime={e.time}>{formatTime(e.time)}</time>
            </td>
            <td>
              <code>{e.type}</code>
            </td>
            <td>{e.source}</td>
            <td>{e.job ? <Link href={`/jobs/${encodeURIComponent(e.job)}`}>{e.job}</Link> : ''}</td>
            <td>
              {e.worker ? <Link href={`/workers/${encodeURIComponent(e.worker)}`}>{e.worker}</Link> : ''}
            </td>
            <td>
              <Payload payload={e.payload} tags={e.tags} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Payload({ payload, tags }: { payload: Record<string, unknown>; tags: string[] | undefined }) {
  const text = JSON.stringify(payload);
  const tagList = tags?.length ? <span class="tags">{tags.map((t) => `#${t}`).join(' ')} </span> : null;
  if (text === '{}') return tagList;
  if (text.length <= 60)
    return (
      <>
        {tagList}
        <code>{text}</code>
      </>
    );
  return (
    <details>
      <summary>
        {tagList}
        <code>{text.slice(0, 52)}…</code>
      </summary>
      <pre>{JSON.stringify(payload, null, 2)}</pre>
    </details>
  );
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { hour12: false });
}
