/** Shows a failed request the way the API explained it: the message, then each detail. */
import { ApiFailure } from '../api.ts';

export function ErrorMessage({ error, id }: { error: Error | undefined; id?: string }) {
  if (!error) return null;
  const details = error instanceof ApiFailure ? error.details : [];
  return (
    <div class="error" role="alert" id={id}>
      <p>{error.message}</p>
      {details.length > 0 && (
        <ul>
          {details.map((d) => (
            <li key={`${d.path}:${d.message}`}>
              {d.path && <code>{d.path}</code>} {d.message}
              {d.line !== undefined && ` (line ${d.line}, column ${d.column ?? '?'})`}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The API's details that concern one key (`key` itself or `key.sub`). */
export function detailsFor(error: Error | undefined, key: string): string[] {
  if (!(error instanceof ApiFailure)) return [];
  return error.details.filter((d) => d.path === key || d.path.startsWith(`${key}.`)).map((d) => d.message);
}
