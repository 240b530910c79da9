/**
 * What a job becomes on one worker: the resolved context with the scope each key came
 * from (job, worker, global, definition, builtin) and the rendered definition. A
 * definition that does not render (a missing key) shows the API's details instead. The
 * context table needs the admin role (`/api/contexts/resolve`); others see the rendered
 * definition only.
 */
import { useState } from 'preact/hooks';
import { type ContextMap, enc, withQuery } from '../api.ts';
import { useCan } from '../lib/identity.ts';
import type { Worker } from '../lib/types.ts';
import { useApi } from '../lib/use-api.ts';
import { ActionsList } from './actions-list.tsx';
import { ErrorMessage } from './error-message.tsx';
import { NeedsRole } from './needs-role.tsx';
import { TableHead } from './table.tsx';
import { ContextEntryCells } from './value.tsx';

interface Resolved {
  context: ContextMap;
  sources: Record<string, string>;
}

export function RenderedView({ job }: { job: string }) {
  const workers = useApi<Worker[]>('/api/workers');
  const [chosen, setChosen] = useState<string | undefined>();
  const worker = chosen ?? workers.data?.[0]?.id;
  return (
    <div class="rendered">
      <div class="field inline">
        <label for="render-worker">Worker</label>
        <select id="render-worker" value={worker} onChange={(e) => setChosen(e.currentTarget.value)}>
          {(workers.data ?? []).map((w) => (
            <option key={w.id} value={w.id}>
              {w.id}
            </option>
          ))}
        </select>
      </div>
      {worker && <ForWorker key={worker} job={job} worker={worker} />}
    </div>
  );
}

function ForWorker({ job, worker }: { job: string; worker: string }) {
  const admin = useCan('admin');
  const resolved = useApi<Resolved>(admin ? withQuery('/api/contexts/resolve', { job, worker }) : undefined);
  const rendered = useApi<{ definition: unknown }>(withQuery(`/api/jobs/${enc(job)}/render`, { worker }));
  const entries = Object.entries(resolved.data?.context ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      {admin ? (
        <>
          <ErrorMessage error={resolved.error} />
          <table class="resolved">
            <caption>
              Context of {job} on {worker}
            </caption>
            <TableHead columns={['Key', 'Type', 'Value', 'From']} />
            <tbody>
              {entries.map(([key, value]) => (
                <tr key={key} data-key={key}>
                  <ContextEntryCells name={key} value={value} />
                  <td>
                    <span class={`source source-${resolved.data!.sources[key]}`}>
                      {resolved.data!.sources[key]}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : (
        <NeedsRole needs="admin">
          The context of {job} on {worker} (each key and where it came from)
        </NeedsRole>
      )}
      <h3>Rendered definition</h3>
      <p class="hint">
        Rendered from the staged version and the job context it was staged with (the saved version if never
        staged); worker and global values are current. Stage or redeploy to apply a job context change.
      </p>
      <ErrorMessage error={rendered.error} />
      {rendered.data && (
        <ActionsList definition={rendered.data.definition} heading="Actions after context rendering" />
      )}
      {rendered.data && (
        <pre class="json rendered-definition">{JSON.stringify(rendered.data.definition, null, 2)}</pre>
      )}
    </>
  );
}
