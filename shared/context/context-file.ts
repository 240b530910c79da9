/**
 * The context export file: `{"format":"sluice-context/v1","exported_at":...,"global":{...}}`,
 * what `GET /api/contexts/export` answers, `POST /api/contexts/import` takes, `sluice context
 * set --replace` sends and the web UI's import reads. The format string is declared here
 * once; this module imports nothing, so the browser bundle can use it as it is.
 */
export const CONTEXT_FILE_FORMAT = 'sluice-context/v1' as const;
