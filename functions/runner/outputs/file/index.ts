/**
 * The `file` output: appends each batch as NDJSON to one file, rotating it by size (the
 * full file is renamed to `<path>.<epoch ms>`, or `<path>.<epoch ms>-<n>` when that is taken,
 * and a new one started). `acknowledge` waits
 * for the data to reach the disk (fdatasync), so an input commits only what survives a
 * power cut. One write per batch; the next batch waits for it (backpressure). A write
 * that fails is reported as `job-errors` (`output: file`) and rejects; the next may succeed.
 *
 * @example
 *   const output = createFileOutput(config, { stored: false }, metrics, report);
 */
import { type FileHandle, link, open, stat, unlink } from 'node:fs/promises';
import { parseByteSize } from '../../../../shared/byte-size.ts';
import type { FileOutput } from '../../../../shared/job/schema.ts';
import {
  type JsonLines,
  markReported,
  type Output,
  type OutputMetrics,
  type RunEvent,
  type RunReport,
} from '../../types.ts';
import { lineOf } from '../batch-buffer.ts';
import { allowedFilePath, type FilePlace } from './paths.ts';

export function createFileOutput(
  config: FileOutput,
  place: FilePlace,
  metrics: OutputMetrics,
  report: (report: RunReport) => void = () => {},
): Output {
  const maxFileBytes = parseByteSize(config['max-file-size']);
  let path: string | undefined;
  let handle: FileHandle | undefined;
  let size = 0;
  let dirty = false;

  /** Reported here, as this output's failure, so that the input and the runner do not report it again. */
  const failed = (err: unknown): unknown => {
    metrics.failures++;
    report({
      type: 'job-errors',
      payload: { output: 'file', path: config.path, reason: (err as Error)?.message ?? String(err) },
    });
    return markReported(err);
  };
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
        await rotateAway(path!);
        file = await ready();
      }
      await file.writev(chunks);
    } catch (err) {
      throw failed(err);
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
        await handle.datasync().catch((err) => {
          throw failed(err);
        });
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

/**
 * Moves a full file to a name no other file has. A rename would replace a file rotated in
 * the same millisecond (and lose its lines); a hard link fails instead, so the next name is tried.
 */
async function rotateAway(path: string): Promise<void> {
  const stamp = `${path}.${Date.now()}`;
  for (let n = 0; ; n++) {
    try {
      await link(path, n === 0 ? stamp : `${stamp}-${n}`);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  await unlink(path);
}
