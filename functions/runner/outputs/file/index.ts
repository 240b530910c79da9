/**
 * The `file` output: appends each batch as NDJSON to one file, rotating it by size (the
 * full file is renamed to `<path>.<epoch ms>` and a new one started). `acknowledge` waits
 * for the data to reach the disk (fdatasync), so an input commits only what survives a
 * power cut. One write per batch; the next batch waits for it (backpressure).
 *
 * @example
 *   const output = createFileOutput(config, { stored: false }, metrics);
 */
import { type FileHandle, open, rename, stat } from 'node:fs/promises';
import { parseByteSize } from '../../../../shared/byte-size.ts';
import type { FileOutput } from '../../../../shared/job/schema.ts';
import type { JsonLines, Output, OutputMetrics, RunEvent } from '../../types.ts';
import { lineOf } from '../batch-buffer.ts';
import { allowedFilePath, type FilePlace } from './paths.ts';

export function createFileOutput(config: FileOutput, place: FilePlace, metrics: OutputMetrics): Output {
  const maxFileBytes = parseByteSize(config['max-file-size']);
  let path: string | undefined;
  let handle: FileHandle | undefined;
  let size = 0;
  let dirty = false;

  const ready = async (): Promise<FileHandle> => {
    if (handle) return handle;
    path ??= await allowedFilePath(config.path, place);
    handle = await open(path, 'a');
    size = (await stat(path)).size;
    return handle;
  };
  const append = async (chunks: Buffer[], events: number) => {
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.length;
    if (!bytes) return;
    try {
      let file = await ready();
      if (size > 0 && size + bytes > maxFileBytes) {
        await file.datasync();
        await file.close();
        handle = undefined;
        await rename(path!, `${path}.${Date.now()}`);
        file = await ready();
      }
      await file.writev(chunks);
    } catch (err) {
      metrics.failures++;
      throw err;
    }
    size += bytes;
    dirty = true;
    metrics.events += events;
    metrics.bytes += bytes;
    metrics.batches++;
  };
  return {
    async write(events: RunEvent[]) {
      let text = '';
      for (const event of events) text += lineOf(event, 'ndjson');
      await append([Buffer.from(text)], events.length);
    },
    async writeJsonLines(lines: JsonLines) {
      await append(lines.chunks, lines.count);
    },
    async acknowledge() {
      if (handle && dirty) {
        await handle.datasync();
        dirty = false;
      }
    },
    async close() {
      const h = handle;
      handle = undefined;
      if (h) {
        await h.datasync().catch(() => {});
        await h.close();
      }
    },
  };
}
