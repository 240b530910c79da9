/**
 * The list endpoints' paging at the edge (shared/api/paging.ts says what it is): turns
 * the query into a page request (a token that is not ours is a 400), and answers a page
 * as the contract's JSON array with the next page's token in `X-Next-Page-Token`.
 *
 * @example
 *   const request = pageRequest(c.req.valid('query'));
 *   const page = await listJobs(deps, tenant, request);
 *   return pageResponse(c, page.items.map(summary), page.next);
 */
import type { Context } from 'hono';
import type { PageQuery } from '../../shared/api/page-query.ts';
import {
  decodePageToken,
  MAX_PAGE_SIZE,
  NEXT_PAGE_HEADER,
  type PageRequest,
} from '../../shared/api/paging.ts';
import { ApiError } from '../../shared/errors.ts';

export function pageRequest(query: PageQuery): PageRequest {
  const limit = query.limit ?? MAX_PAGE_SIZE;
  if (query.page_token === undefined) return { limit };
  const after = decodePageToken(query.page_token);
  if (!after)
    throw ApiError.invalid(
      'page_token is not a token of this list: pass the X-Next-Page-Token of the previous page',
      [{ path: 'page_token', message: 'not a page token' }],
    );
  return { limit, after };
}

/** Sets the next page's header (when there is one); the body is the caller's. */
export function setNextPage(c: Context, next: string | undefined): void {
  if (next) c.header(NEXT_PAGE_HEADER, next);
}
