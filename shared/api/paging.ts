/**
 * Paging of the list endpoints (`GET /api/jobs`, `/api/workers`, ...): `?limit=N` (1 to
 * 1,000, default 1,000) and `?page_token=T` from the previous page. The body stays the
 * JSON array the contract defines; when more items follow, the `X-Next-Page-Token` header
 * holds the token of the next page. Items come in a stable order (each endpoint names its
 * key), so following the tokens visits each item once while items are added or removed.
 *
 * A token is the key of the last item of a page, opaque to clients (base64url of JSON).
 * No zod here: the web UI imports this module; the query's schema is page-query.ts.
 *
 * @example
 *   const token = encodePageToken(['orders']);
 *   decodePageToken(token); // ['orders']
 */
export const MAX_PAGE_SIZE = 1000;
export const NEXT_PAGE_HEADER = 'X-Next-Page-Token';

/** A page request after decoding: the key to start after (none: from the first item). */
export interface PageRequest {
  limit: number;
  after?: string[];
}

export function encodePageToken(key: readonly string[]): string {
  const bytes = new TextEncoder().encode(JSON.stringify(key));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** The key in a token, or undefined when it is not one of ours. */
export function decodePageToken(token: string): string[] | undefined {
  try {
    const binary = atob(token.replaceAll('-', '+').replaceAll('_', '/'));
    const text = new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
    const key = JSON.parse(text) as unknown;
    if (Array.isArray(key) && key.length > 0 && key.every((part) => typeof part === 'string')) return key;
  } catch {
    // not JSON
  }
  return undefined;
}

/** The items of a page from `limit + 1` fetched (or all, sorted), and the next page's token. */
export function pageFrom<T>(
  items: readonly T[],
  request: PageRequest,
  keyOf: (item: T) => string[],
): { items: T[]; next?: string } {
  if (items.length <= request.limit) return { items: [...items] };
  const page = items.slice(0, request.limit);
  return { items: page, next: encodePageToken(keyOf(page[page.length - 1]!)) };
}

/**
 * Pages a list held in memory, sorted by `keyOf` in the order of `compareKeys` (sort it
 * with `sortByKey`): sorted in any other order (say localeCompare), a page starts after
 * the wrong item and items are skipped.
 */
export function pageInMemory<T>(
  sorted: readonly T[],
  request: PageRequest,
  keyOf: (item: T) => string[],
): { items: T[]; next?: string } {
  const after = request.after;
  const start = after ? sorted.findIndex((item) => compareKeys(keyOf(item), after) > 0) : 0;
  if (start < 0) return { items: [] };
  return pageFrom(sorted.slice(start, start + request.limit + 1), request, keyOf);
}

/** A copy of `items` in the order paging uses: `keyOf` compared with `compareKeys`. */
export function sortByKey<T>(items: readonly T[], keyOf: (item: T) => string[]): T[] {
  return [...items].sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
}

/**
 * The order of page keys: part by part, each by code unit (as `<` compares strings; for
 * the ASCII names the lists hold, the order Firestore sorts by), never by locale.
 */
export function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? '';
    const y = b[i] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
