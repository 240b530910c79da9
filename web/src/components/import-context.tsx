/**
 * Import of a context export file: reads the file in the browser, shows which keys it
 * adds, changes and removes against the current global map, and applies it
 * (`POST /api/contexts/import`, a wholesale replacement) only when confirmed.
 */
import { useId, useState } from 'preact/hooks';
import { api, type ContextMap, type JsonValue } from '../api.ts';
import { type ContextDiff, diffContext, parseExportFile } from '../lib/context-diff.ts';
import { ErrorMessage } from './error-message.tsx';
import { TableHead } from './table.tsx';
import { ValueView } from './value.tsx';

interface Preview {
  fileName: string;
  document: unknown;
  diff: ContextDiff;
}

export function ImportContext({ onImported }: { onImported: () => void }) {
  const id = useId();
  const [preview, setPreview] = useState<Preview | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const [status, setStatus] = useState('');

  const choose = async (input: HTMLInputElement) => {
    setError(undefined);
    setStatus('');
    setPreview(undefined);
    const file = input.files?.[0];
    if (!file) return;
    const parsed = parseExportFile(await file.text());
    if (!parsed.ok) {
      setError(new Error(`${file.name}: ${parsed.error}`));
      return;
    }
    try {
      const current = await api.get<ContextMap>('/api/contexts/global');
      setPreview({
        fileName: file.name,
        document: parsed.document,
        diff: diffContext(current, parsed.global),
      });
    } catch (err) {
      setError(err as Error);
    }
  };

  const apply = async () => {
    if (!preview) return;
    setError(undefined);
    try {
      await api.post('/api/contexts/import', preview.document);
      setStatus(`Imported ${preview.fileName}.`);
      setPreview(undefined);
      onImported();
    } catch (err) {
      setError(err as Error);
    }
  };

  const d = preview?.diff;
  const changes = d ? d.added.length + d.changed.length + d.removed.length : 0;
  return (
    <div class="import">
      <label for={id}>Import from a file (replaces the global context)</label>
      <input
        id={id}
        type="file"
        accept="application/json,.json"
        onChange={(e) => void choose(e.currentTarget)}
      />
      <ErrorMessage error={error} />
      <p class="status" role="status" aria-live="polite">
        {status}
      </p>
      {preview && d && (
        <section class="preview" aria-labelledby={`${id}-preview`}>
          <h3 id={`${id}-preview`}>Preview of {preview.fileName}</h3>
          <p>
            {d.added.length} added, {d.changed.length} changed, {d.removed.length} removed, {d.unchanged}{' '}
            unchanged.
          </p>
          {changes > 0 && (
            <table class="diff">
              <caption class="sr-only">Changes the import makes</caption>
              <TableHead columns={['Change', 'Key', 'Now', 'After import']} />
              <tbody>
                {d.added.map((c) => (
                  <DiffRow key={c.key} change="added" name={c.key} after={c.after} />
                ))}
                {d.changed.map((c) => (
                  <DiffRow key={c.key} change="changed" name={c.key} before={c.before} after={c.after} />
                ))}
                {d.removed.map((c) => (
                  <DiffRow key={c.key} change="removed" name={c.key} before={c.before} />
                ))}
              </tbody>
            </table>
          )}
          <div class="actions">
            <button type="button" class="primary" onClick={apply}>
              Apply import
            </button>
            <button type="button" onClick={() => setPreview(undefined)}>
              Cancel
            </button>
          </div>
        </section>
      )}
    </div>
  );
}

function DiffRow({
  change,
  name,
  before,
  after,
}: {
  change: 'added' | 'changed' | 'removed';
  name: string;
  before?: JsonValue;
  after?: JsonValue;
}) {
  return (
    <tr class={`diff-${change}`} data-key={name}>
      <td>{change}</td>
      <th scope="row">
        <code>{name}</code>
      </th>
      <td>{before === undefined ? '—' : <ValueView value={before} />}</td>
      <td>{after === undefined ? '—' : <ValueView value={after} />}</td>
    </tr>
  );
}
