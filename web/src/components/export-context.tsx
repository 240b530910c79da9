/**
 * Export of the global context (`GET /api/contexts/export`) to a JSON file named after
 * the day, saved by the browser. Fetched first, so a failure shows here instead of as a
 * broken download.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorMessage } from './error-message.tsx';

export function ExportContext() {
  const [error, setError] = useState<Error | undefined>();
  const save = async () => {
    setError(undefined);
    try {
      const doc = await api.get<unknown>('/api/contexts/export');
      const blob = new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: 'application/json' });
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = `sluice-context-${new Date().toISOString().slice(0, 10)}.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <div class="export">
      <button type="button" class="primary" onClick={save}>
        Export to a JSON file
      </button>
      <ErrorMessage error={error} />
    </div>
  );
}
