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
  if (after !== undefined) {
    // Resume after the last entry of the previous page; a rolled-up prefix skips its whole subtree.
    const resumeAt =
      after.endsWith(query.delimiter ?? '\u0000') && query.delimiter ? after + '\uffff' : after + '\u0000';
    index = Math.max(index, lowerBound(names, resumeAt));
  }

  const page: ListPage = { names: [], prefixes: [] };
  let last: string | undefined;
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
          last = rolled;
        }
        index = lowerBound(names, rolled + '\uffff');
        continue;
      }
    }
    if (!glob || glob.test(name)) {
      page.names.push(name);
      last = name;
    }
    index++;
  }
  return page;
}

function encodeToken(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

function decodeToken(token: string): string {
  return Buffer.from(token, 'base64url').toString('utf8');
}
