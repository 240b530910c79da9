/**
 * The Context workspace: the global defaults as a table of typed values (add, edit,
 * delete), export to a JSON file, and import from one with a preview of what changes.
 * All of it needs the admin role; anyone else is told so (and nothing is asked of the API).
 */
import { useState } from 'preact/hooks';
import { api, type ContextMap } from '../api.ts';
import { ContextEditor } from '../components/context-editor.tsx';
import { ExportContext } from '../components/export-context.tsx';
import { ImportContext } from '../components/import-context.tsx';
import { NeedsRole } from '../components/needs-role.tsx';
import { useCan } from '../lib/identity.ts';
import { Link } from '../router.tsx';

export function ContextPage() {
  const [version, setVersion] = useState(0);
  const admin = useCan('admin');
  if (!admin)
    return (
      <>
        <h1>Context workspace</h1>
        <NeedsRole needs="admin">The context workspace (reading and changing the global context)</NeedsRole>
        <p>
          <Link href="/jobs">Go to Jobs</Link>.
        </p>
      </>
    );
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
