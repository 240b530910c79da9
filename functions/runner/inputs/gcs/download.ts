/**
 * Object bytes as a stream of chunks, exactly as stored (`decompress: false`: an
 * object stored with `Content-Encoding: gzip` arrives compressed and is decompressed
 * once, by `preprocess.ts`). The generation is pinned, so an overwrite during the read
 * fails instead of mixing two versions. A transient failure mid-stream resumes at the
 * byte where it stopped (a Range request), so downstream stages see one unbroken stream
 * and no line is delivered twice. `retry.timeout` bounds the wait for each chunk (not the
 * time the reader takes with one).
 *
 * @example
 *   for await (const chunk of downloadBytes(bucket, meta, policy)) consume(chunk);
 */
import type { Bucket } from '@google-cloud/storage';
import type { ObjectMeta } from './list.ts';
import { backoff, isTransient, type RetryPolicy, TimeoutError } from './retry.ts';

export interface ByteRange {
  /** First byte, inclusive. */
  start?: number;
  /** Last byte, inclusive. */
  end?: number;
}

/**
 * A Cloud Storage generation as a download pins it: a positive integer of at most 16 digits
 * that a number holds exactly (at most 2^53 - 1; generations are microseconds since 1970,
 * 16 digits until the year 2255). A longer one would be rounded, or become Infinity, which
 * the client sends as an empty `generation=`: the current version, unpinned.
 */
export function isGeneration(value: unknown): value is string {
  return (
    typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value) && Number(value) <= Number.MAX_SAFE_INTEGER
  );
}

/** Thrown, before any request, for a generation that cannot be pinned (see `isGeneration`). */
export class UnpinnableGenerationError extends Error {
  override name = 'UnpinnableGenerationError';
  constructor(readonly generation: string) {
    super(
      `generation ${generation.slice(0, 40)}${generation.length > 40 ? '...' : ''} is not a Cloud Storage generation: not read`,
    );
  }
}

export async function* downloadBytes(
  bucket: Bucket,
  meta: Pick<ObjectMeta, 'name' | 'generation'>,
  policy: RetryPolicy,
  range: ByteRange = {},
  onRequest: () => void = () => {},
): AsyncGenerator<Buffer> {
  // '0': a version the listing did not name (`download-objects` by name) is read as it is.
  if (meta.generation !== '0' && !isGeneration(meta.generation))
    throw new UnpinnableGenerationError(meta.generation);
  const file = bucket.file(meta.name, meta.generation !== '0' ? { generation: Number(meta.generation) } : {});
  let offset = range.start ?? 0;
  for (let failures = 0; ; ) {
    policy.signal?.throwIfAborted();
    onRequest();
    const ranged = offset > 0 || range.end !== undefined;
    const stream = file.createReadStream({
      decompress: false,
      validation: false,
      ...(ranged ? { start: offset } : {}),
      ...(range.end !== undefined ? { end: range.end } : {}),
    });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      if (policy.timeoutMs > 0)
        timer = setTimeout(
          () => stream.destroy(new TimeoutError(`no data within ${policy.timeoutMs} ms`)),
          policy.timeoutMs,
        );
    };
    const onAbort = () => stream.destroy(policy.signal?.reason as Error);
    policy.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      arm();
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        // The timeout is Cloud Storage's, not the reader's: a slow output holding a chunk
        // does not cut the download (it would be asked for again by range after each pause).
        clearTimeout(timer);
        offset += chunk.length;
        // A chunk that arrived means the connection works again.
        failures = 0;
        yield chunk;
        arm();
      }
      return;
    } catch (err) {
      if (policy.signal?.aborted) throw policy.signal.reason;
      if (failures >= policy.retries || !isTransient(err)) throw err;
      await backoff(failures++, policy);
    } finally {
      clearTimeout(timer);
      policy.signal?.removeEventListener('abort', onAbort);
      stream.destroy();
    }
  }
}

/** The bytes `start..end` (inclusive) of an object, for readers that seek (parquet). */
export async function readRange(
  bucket: Bucket,
  meta: Pick<ObjectMeta, 'name' | 'generation'>,
  policy: RetryPolicy,
  start: number,
  end: number,
  onRequest?: () => void,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of downloadBytes(bucket, meta, policy, { start, end }, onRequest))
    chunks.push(chunk);
  return Buffer.concat(chunks);
}
