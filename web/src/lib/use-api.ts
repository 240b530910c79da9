/**
 * Loads an API resource for a component: `{ data, error, loading, reload }`, reloading
 * when the path changes and, with `refreshMs`, every so often. Answers of an outdated
 * path are dropped.
 *
 * @example
 *   const jobs = useApi<JobSummary[]>('/api/jobs');
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { MAX_PAGE_SIZE } from '../../../shared/api/paging.ts';
import { api, withQuery } from '../api.ts';

/** How often lists of changing state (workers, jobs, deployments) refresh. */
export const REFRESH_MS = 5000;

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => Promise<void>;
  /** Changes the loaded value in place (a page added to a list). */
  setData: (update: (data: T | undefined) => T | undefined) => void;
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
  return { data, error, loading, reload, setData };
}

export interface LoadedPages<T> extends Loaded<T[]> {
  /** Whether the list has more items than are loaded. */
  more: boolean;
  /** Loads the next page and adds it to `data`. */
  loadMore: () => Promise<void>;
}

/** Rows a list page shows before "Load more". */
export const PAGE_SIZE = 100;

/**
 * A paged list (shared/api/paging.ts): the first `pageSize` items, then `loadMore` adds a
 * page at a time. A refresh reloads as many items as are shown, from the start.
 *
 * @example
 *   const jobs = usePagedApi<JobSummary>('/api/jobs', { refreshMs: REFRESH_MS });
 *   {jobs.more && <button onClick={jobs.loadMore}>Load more</button>}
 */
export function usePagedApi<T>(
  path: string,
  options: { pageSize?: number; refreshMs?: number } = {},
): LoadedPages<T> {
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const shown = useRef(pageSize);
  const next = useRef<string | undefined>(undefined);
  const [more, setMore] = useState(false);
  const loaded = useApi<T[]>(
    path,
    async (p) => {
      const page = await api.page<T>(withQuery(p, { limit: Math.min(MAX_PAGE_SIZE, shown.current) }));
      next.current = page.next;
      setMore(page.next !== undefined);
      return page.items;
    },
    options,
  );
  const { setData } = loaded;
  const loadMore = useCallback(async () => {
    const token = next.current;
    if (!token) return;
    const page = await api.page<T>(withQuery(path, { limit: pageSize, page_token: token }));
    next.current = page.next;
    setMore(page.next !== undefined);
    shown.current += pageSize;
    setData((data) => [...(data ?? []), ...page.items]);
  }, [path, pageSize, setData]);
  return { ...loaded, more, loadMore };
}
