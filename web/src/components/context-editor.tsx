/**
 * A context map as a table of typed values, with add, edit and delete (merge updates:
 * `null` deletes a key) and, where the scope allows it, replacing the whole map. Used
 * for the global map, a worker's overrides and a job's overrides.
 *
 * @example
 *   <ContextEditor label="Global context" path="/api/contexts/global"
 *     merge={(u) => api.post('/api/contexts/update-global', u)} />
 */
import { useId, useState } from 'preact/hooks';
import type { ContextMap, JsonValue } from '../api.ts';
import { useApi } from '../lib/use-api.ts';
import { ErrorMessage } from './error-message.tsx';
import { KeyValueForm } from './key-value-form.tsx';
import { EmptyRow, TableHead } from './table.tsx';
import { ContextEntryCells } from './value.tsx';

interface Props {
  label: string;
  path: string;
  merge: (update: ContextMap) => Promise<unknown>;
  replace?: (map: ContextMap) => Promise<unknown>;
  /** Called after every saved change (e.g. to refresh a resolved view). */
  onChange?: () => void;
}

export function ContextEditor({ label, path, merge, replace, onChange }: Props) {
  const map = useApi<ContextMap>(path);
  const [editing, setEditing] = useState<string | undefined>();
  const [deleting, setDeleting] = useState<string | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const [status, setStatus] = useState('');
  const captionId = useId();

  const saved = async (what: string) => {
    setStatus('');
    await map.reload();
    // Announced once the table shows the change.
    setStatus(what);
    onChange?.();
  };
  const save = async (key: string, value: JsonValue | null, what: string) => {
    await merge({ [key]: value });
    setEditing(undefined);
    setDeleting(undefined);
    await saved(what);
  };
  const remove = async (key: string) => {
    setError(undefined);
    try {
      await save(key, null, `Deleted ${key}.`);
    } catch (err) {
      setError(err as Error);
    }
  };

  const entries = Object.entries(map.data ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div class="context-editor">
      <ErrorMessage error={map.error} />
      <table aria-labelledby={captionId}>
        <caption id={captionId}>{label}</caption>
        <TableHead columns={['Key', 'Type', 'Value']} actions />
        <tbody>
          {map.data && entries.length === 0 && <EmptyRow span={4}>No keys yet.</EmptyRow>}
          {entries.map(([key, value]) =>
            editing === key ? (
              <tr key={key} data-key={key}>
                <th scope="row">
                  <code>{key}</code>
                </th>
                <td colSpan={3}>
                  <KeyValueForm
                    fixedKey={key}
                    initial={value}
                    submitLabel="Save"
                    onSubmit={(k, v) => save(k, v, `Saved ${k}.`)}
                    onCancel={() => setEditing(undefined)}
                  />
                </td>
              </tr>
            ) : (
              <tr key={key} data-key={key}>
                <ContextEntryCells name={key} value={value} />
                <td class="row-actions">
                  {deleting === key ? (
                    <>
                      <span>Delete {key}?</span>
                      <button type="button" class="danger" onClick={() => remove(key)}>
                        Confirm delete
                      </button>
                      <button type="button" onClick={() => setDeleting(undefined)}>
                        Keep
                      </button>
                    </>
                  ) : (
                    <>
                      <button type="button" onClick={() => setEditing(key)} aria-label={`Edit ${key}`}>
                        Edit
                      </button>
                      <button type="button" onClick={() => setDeleting(key)} aria-label={`Delete ${key}`}>
                        Delete
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
      <ErrorMessage error={error} />
      <p class="status" role="status" aria-live="polite">
        {status}
      </p>
      <div class="add-key">
        <KeyValueForm submitLabel="Add key" onSubmit={(k, v) => save(k, v, `Added ${k}.`)} />
      </div>
      {replace && map.data && (
        <ReplaceAll
          key={JSON.stringify(map.data)}
          current={map.data}
          replace={replace}
          onDone={() => saved('Replaced all keys.')}
        />
      )}
    </div>
  );
}

function ReplaceAll({
  current,
  replace,
  onDone,
}: {
  current: ContextMap;
  replace: (map: ContextMap) => Promise<unknown>;
  onDone: () => Promise<void>;
}) {
  const id = useId();
  const [text, setText] = useState(() => JSON.stringify(current, null, 2));
  const [error, setError] = useState<Error | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let map: unknown;
    try {
      map = JSON.parse(text);
    } catch (err) {
      setError(new Error(`not valid JSON: ${(err as Error).message}`));
      return;
    }
    if (map === null || typeof map !== 'object' || Array.isArray(map)) {
      setError(new Error('the overrides must be a JSON object of keys to values'));
      return;
    }
    try {
      await replace(map as ContextMap);
      await onDone();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <details class="replace-all">
      <summary>Replace all keys (no merge)</summary>
      <form onSubmit={submit}>
        <label for={id}>The whole map, as JSON; keys left out are removed</label>
        <textarea
          id={id}
          class="json-editor"
          rows={8}
          spellcheck={false}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <ErrorMessage error={error} />
        <button type="submit" class="primary">
          Replace all
        </button>
      </form>
    </details>
  );
}
