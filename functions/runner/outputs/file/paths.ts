/**
 * Where a `file` output may write. A job given to `sluice job run` writes where it says
 * (the user runs it on their own machine). A job from the control plane was written by
 * someone who does not own the worker: its path is relative to the worker's data folder
 * (`sluice worker run --data-dir`, `SLUICE_DATA_DIR`), and must stay inside it after
 * symbolic links are followed; without a data folder it may not write at all.
 *
 * @example
 *   const file = await allowedFilePath('out/events.ndjson', { stored: true, dataDir: '/var/lib/sluice' });
 */
import { mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { storedPathProblem } from '../../../../shared/job/outputs/file.ts';

export interface FilePlace {
  /** The job came from the control plane. */
  stored: boolean;
  dataDir?: string;
}

export async function allowedFilePath(path: string, place: FilePlace): Promise<string> {
  if (!place.stored) {
    await mkdir(dirname(resolve(path)), { recursive: true });
    return resolve(path);
  }
  if (!place.dataDir)
    throw new Error(
      'the file output of a deployed job needs a worker data folder: start the worker with --data-dir (or SLUICE_DATA_DIR)',
    );
  const problem = storedPathProblem(path);
  if (problem) throw new Error(`file output path ${JSON.stringify(path)} ${problem}`);
  await mkdir(place.dataDir, { recursive: true });
  const root = await realpath(place.dataDir);
  const target = join(root, path);
  await mkdir(dirname(target), { recursive: true });
  // A symbolic link inside the folder could point out of it: the real parent must stay inside.
  const parent = await realpath(dirname(target));
  const inside = relative(root, parent);
  if (inside.startsWith('..') || isAbsolute(inside))
    throw new Error(`file output path ${JSON.stringify(path)} leads out of the worker data folder`);
  const file = join(parent, target.slice(dirname(target).length + 1));
  const real = await realpath(file).catch(() => file);
  const within = relative(root, real);
  if (within.startsWith('..') || isAbsolute(within))
    throw new Error(`file output path ${JSON.stringify(path)} leads out of the worker data folder`);
  return file;
}
