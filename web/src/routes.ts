/**
 * The UI's pages, declared once: the browser's router matches them, and the server
 * answers each of these paths with the app's HTML (so a reload or a shared link works).
 *
 * @example
 *   matchPage('/jobs/status') // { page: 'job', param: 'status' }
 *   matchPage('/jobs/%E0%A4%A') // undefined (a malformed escape: Not found)
 */
export type Page = 'context' | 'workers' | 'worker' | 'jobs' | 'job' | 'events' | 'docs' | 'login';

export interface PageMatch {
  page: Page;
  param?: string;
}

/** Server-side route patterns (Hono syntax) that serve the app's HTML. */
export const PAGE_PATHS = [
  '/',
  '/context',
  '/workers',
  '/workers/:id',
  '/jobs',
  '/jobs/:name',
  '/events',
  '/login',
  '/api/docs',
] as const;

export function matchPage(pathname: string): PageMatch | undefined {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/' || path === '/context') return { page: 'context' };
  if (path === '/workers') return { page: 'workers' };
  if (path === '/jobs') return { page: 'jobs' };
  if (path === '/events') return { page: 'events' };
  if (path === '/login') return { page: 'login' };
  if (path === '/api/docs') return { page: 'docs' };
  const one = /^\/(workers|jobs)\/([^/]+)$/.exec(path);
  if (!one) return undefined;
  const param = decodeSegment(one[2]!);
  // A malformed escape (`/jobs/%E0%A4%A`) names no worker or job: the Not found page.
  return param === undefined ? undefined : { page: one[1] === 'workers' ? 'worker' : 'job', param };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
