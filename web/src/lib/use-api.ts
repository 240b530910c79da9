/**
 * Loads an API resource for a component: `{ data, error, loading, reload }`, reloading
 * when the path changes and, with `refreshMs`, every so often. Answers of an outdated
 * path are dropped.
 *
 * @example
 *   const jobs = useApi<JobSummary[]>('/api/jobs');
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';

/** How often lists of changing state (workers, jobs, deployments) refresh. */
export const REFRESH_MS = 5000;

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useApi<T>(
  path: string | undefined,
  load?: (path: string) => Promise<T>,
  options: { refreshMs?: number } = {},
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const latest = useRef(path);
  latest.current = path;
  const loader = load ?? ((p: string) => api.get<T>(p));

  const reload = useCallback(async () => {
    if (!path) return;
    setLoading(true);
    try {
      const value = await loader(path);
      if (latest.current === path) {
        setData(value);
        setError(undefined);
      }
    } catch (err) {
      if (latest.current === path) setError(err as Error);
    } finally {
      if (latest.current === path) setLoading(false);
    }
  }, [path]);

  useEffect(() => {
    void reload();
    if (!options.refreshMs) return;
    // Refreshes quietly (no loading state) while the page is open, e.g. worker states.
    const timer = window.setInterval(() => void reload(), options.refreshMs);
    return () => window.clearInterval(timer);
  }, [reload, options.refreshMs]);
  return { data, error, loading, reload };
}
