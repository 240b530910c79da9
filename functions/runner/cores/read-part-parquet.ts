/**
 * The read worker's parquet code (row groups read on a thread): hyparquet, parquet-wasm's
 * glue and apache-arrow, about 0.5 MB of the thread's script. Its own part (read-parts.ts),
 * loaded into a thread with the first row group it reads.
 */
import { parquetRows } from '../inputs/gcs/parquet.ts';
import { sparseSource } from '../inputs/gcs/parquet-layout.ts';
import { parquetModulesFor } from './parquet-wasm.ts';

export const parquetPart = { parquetRows, sparseSource, parquetModulesFor };
