/**
 * The `preprocessors`, in the order the job lists them: `extension` (chooses gzip and/or
 * parquet from the name: `.gz`, `.parquet`, `.parquet.gz`), `gzip`, `parquet` (rows),
 * `base64`. Decisions about gzip are made on the bytes: data that does not start with the
 * gzip magic number passes through, so an object stored with `Content-Encoding: gzip`
 * (decompressed once here, as transport encoding) is never decompressed twice.
 *
 * @example
 *   const content = await preprocess(bytes, meta, ['extension'], { parquetSource });
 *   if (content.kind === 'rows') for await (const slice of content.rows) ...
 */
import type { RowSlice } from './arrow-rows.ts';
import type { Preprocessor } from './config.ts';
import { applySteps, type Content } from './decompress.ts';
import type { ObjectMeta } from './list.ts';
import { type ByteSource, bufferReader, parquetRows } from './parquet.ts';
import { nodeParquetModules } from './parquet-node.ts';

export { type Content, expandSteps } from './decompress.ts';

/** Most bytes buffered for parquet data that an earlier step produced (it cannot be read by range). */
export const MAX_BUFFERED_PARQUET_BYTES = 512 * 1024 * 1024;

export interface PreprocessSources {
  /** Random access to the stored object, for parquet applied to the object's own bytes. */
  parquetSource?: () => ByteSource;
}

export function preprocess(
  raw: AsyncIterable<Buffer>,
  meta: Pick<ObjectMeta, 'name' | 'contentEncoding'>,
  preprocessors: Preprocessor[],
  sources: PreprocessSources = {},
): Content {
  return applySteps(raw, meta, preprocessors, (chunks, untouched) =>
    untouched && sources.parquetSource
      ? parquetRows(sources.parquetSource(), nodeParquetModules)
      : bufferedParquet(chunks),
  );
}

async function* bufferedParquet(chunks: AsyncIterable<Buffer>): AsyncGenerator<RowSlice> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > MAX_BUFFERED_PARQUET_BYTES) {
      throw new Error(
        `parquet data produced by an earlier preprocessor exceeds ${MAX_BUFFERED_PARQUET_BYTES} bytes; store parquet uncompressed (parquet compresses internally) to read it by range`,
      );
    }
    parts.push(chunk);
  }
  yield* parquetRows(bufferReader(Buffer.concat(parts)), nodeParquetModules);
}
