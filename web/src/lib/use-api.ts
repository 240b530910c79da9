/**
 * Loads an API resource for a component: `{ data, error, loading, reload }`, reloading
 * when the path changes. Answers of an outdated path are dropped.
 *
 * @example
 *   const jobs = useApi<JobSummary[]>('/api/jobs');
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useApi<T>(path: string | undefined, load?: (path: string) => Promise<T>): Loaded<T> {
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
  }, [reload]);
  return { data, error, loading, reload };
}
