/**
 * Listing, page by page: never more than one page of object metadata is held, however
 * large the bucket. Each query is a prefix and/or a `startOffset`/`endOffset` range
 * (see `list-range.ts`); pages are requested one at a time with retries.
 *
 * @example
 *   for await (const page of listObjects(bucket, [{ prefix: 'logs/' }], policy)) handle(page);
 */
import type { Bucket } from '@google-cloud/storage';
import { httpStatus, type RetryPolicy, withRetry } from './retry.ts';

export interface ObjectMeta {
  bucket: string;
  name: string;
  generation: string;
  size: number;
  contentType?: string;
  contentEncoding?: string;
  timeCreated?: string;
  updated?: string;
  etag?: string;
}

export interface ListQuery {
  prefix?: string;
  startOffset?: string;
  endOffset?: string;
}

export const PAGE_SIZE = 1000;

/**
 * A partial response of only what `ObjectMeta` keeps: smaller pages from GCS, and the
 * client returns plain objects instead of building a `File` (with its ACL helpers) for
 * each of the 1000 items, which was the largest CPU cost of a re-scan.
 */
export const LIST_FIELDS =
  'items(name,generation,size,contentType,contentEncoding,timeCreated,updated,etag),nextPageToken';

export async function* listObjects(
  bucket: Bucket,
  queries: ListQuery[],
  policy: RetryPolicy,
  onRequest: () => void = () => {},
): AsyncGenerator<ObjectMeta[]> {
  for (const query of queries) {
    let pageToken: string | undefined;
    do {
      onRequest();
      const request = {
        autoPaginate: false,
        maxResults: PAGE_SIZE,
        fields: LIST_FIELDS,
        ...(query.prefix ? { prefix: query.prefix } : {}),
        ...(query.startOffset ? { startOffset: query.startOffset } : {}),
        ...(query.endOffset ? { endOffset: query.endOffset } : {}),
        ...(pageToken ? { pageToken } : {}),
      };
      // With `fields` set, the client hands back the items as plain resources, not `File`s.
      const [items, next] = (await withRetry(() => bucket.getFiles(request), policy).catch((err) => {
        throw httpStatus(err) === 404 ? new BucketNotFoundError(bucket.name, err) : err;
      })) as unknown as [Record<string, unknown>[], { pageToken?: string } | null];
      pageToken = next?.pageToken ?? undefined;
      yield items.map((item) => toMeta(bucket.name, item));
    } while (pageToken);
  }
}

/**
 * A listing answered 404: the bucket does not exist (a listing has no other 404). It keeps
 * the answer's status (`code`) and message, so the run reports it as any failed request;
 * `sluice job run` exits 4 (not found) on it.
 */
export class BucketNotFoundError extends Error {
  override name = 'BucketNotFoundError';
  readonly code = 404;

  constructor(
    readonly bucket: string,
    cause: unknown,
  ) {
    super(String((cause as Error | undefined)?.message ?? cause), { cause });
  }
}

export function toMeta(bucket: string, m: Record<string, unknown>): ObjectMeta {
  return {
    bucket,
    name: String(m.name),
    generation: String(m.generation ?? '0'),
    size: Number(m.size ?? 0),
    contentType: m.contentType as string | undefined,
    contentEncoding: m.contentEncoding as string | undefined,
    timeCreated: m.timeCreated as string | undefined,
    updated: m.updated as string | undefined,
    etag: m.etag as string | undefined,
  };
}

/** Drops prefixes covered by a shorter one, so no object is listed twice. */
export function minimalPrefixes(prefixes: string[]): string[] {
  const sorted = [...new Set(prefixes)].sort();
  const kept: string[] = [];
  for (const prefix of sorted) {
    const last = kept[kept.length - 1];
    if (last === undefined || !prefix.startsWith(last)) kept.push(prefix);
  }
  return kept;
}
