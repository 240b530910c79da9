/**
 * Object listing with the semantics of `objects.list`: `prefix`, `delimiter`
 * (rolled-up `prefixes`), `startOffset` / `endOffset`, `matchGlob`, and pages of
 * `maxResults` entries with an opaque `pageToken`. Walks the sorted name index from
 * a binary-searched start, so a page costs O(log n + page size).
 */
import { globToRegExp } from './glob.ts';
import { lowerBound } from './store.ts';

export interface ListQuery {
  prefix?: string;
  delimiter?: string;
  startOffset?: string;
  endOffset?: string;
  matchGlob?: string;
  pageToken?: string;
  maxResults?: number;
}

export interface ListPage {
  names: string[];
  prefixes: string[];
  nextPageToken?: string;
}

export function listNames(names: string[], query: ListQuery): ListPage {
  const prefix = query.prefix ?? '';
  const max = Math.min(Math.max(query.maxResults ?? 1000, 1), 1000);
  const glob = query.matchGlob ? globToRegExp(query.matchGlob) : undefined;
  const after = query.pageToken ? decodeToken(query.pageToken) : undefined;

  let start = prefix;
  if (query.startOffset && query.startOffset > start) start = query.startOffset;
  let index = lowerBound(names, start);
  if (after) {
    // Resume after the last entry of the previous page: past a rolled-up prefix's whole
    // subtree, or just past an object (whose name may end in the delimiter too: `L/`).
    index = Math.max(
      index,
      after.prefix ? endOfPrefix(names, after.name) : lowerBound(names, after.name + '\u0000'),
    );
  }

  const page: ListPage = { names: [], prefixes: [] };
  let last: PageEnd | undefined;
  while (index < names.length) {
    const name = names[index]!;
    if (!name.startsWith(prefix)) break;
    if (query.endOffset && name >= query.endOffset) break;
    if (page.names.length + page.prefixes.length >= max) {
      page.nextPageToken = encodeToken(last!);
      break;
    }
    if (query.delimiter) {
      const cut = name.indexOf(query.delimiter, prefix.length);
      if (cut !== -1) {
        const rolled = name.slice(0, cut + query.delimiter.length);
        if (!glob || glob.test(name)) {
          page.prefixes.push(rolled);
          last = { name: rolled, prefix: true };
        }
        index = endOfPrefix(names, rolled);
        continue;
      }
    }
    if (!glob || glob.test(name)) {
      page.names.push(name);
      last = { name, prefix: false };
    }
    index++;
  }
  return page;
}

/** The last entry of a page: an object, or a rolled-up prefix standing for its subtree. */
interface PageEnd {
  name: string;
  prefix: boolean;
}

/** Index of the first name after every name that starts with `prefix` (they are contiguous). */
function endOfPrefix(names: string[], prefix: string): number {
  let lo = lowerBound(names, prefix);
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (names[mid]!.startsWith(prefix)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function encodeToken(end: PageEnd): string {
  return Buffer.from((end.prefix ? 'p' : 'o') + end.name, 'utf8').toString('base64url');
}

function decodeToken(token: string): PageEnd | undefined {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (text[0] !== 'p' && text[0] !== 'o') return undefined;
  return { name: text.slice(1), prefix: text[0] === 'p' };
}
