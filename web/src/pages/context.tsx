/**
 * The Context workspace: the global defaults as a table of typed values (add, edit,
 * delete), export to a JSON file, and import from one with a preview of what changes.
 */
import { useState } from 'preact/hooks';
import { api, type ContextMap } from '../api.ts';
import { ContextEditor } from '../components/context-editor.tsx';
import { ExportContext } from '../components/export-context.tsx';
import { ImportContext } from '../components/import-context.tsx';

export function ContextPage() {
  const [version, setVersion] = useState(0);
  return (
    <>
      <h1>Context workspace</h1>
      <p class="lead">
        Global defaults apply to every job on every worker, below worker and job overrides. Saving publishes
        the change to all workers at once.
      </p>
      <ContextEditor
        key={version}
        label="Global context"
        path="/api/contexts/global"
        merge={(update: ContextMap) => api.post('/api/contexts/update-global', update)}
      />
      <section aria-labelledby="backup">
        <h2 id="backup">Backup and restore</h2>
        <ExportContext />
        <ImportContext onImported={() => setVersion((v) => v + 1)} />
      </section>
    </>
  );
}
