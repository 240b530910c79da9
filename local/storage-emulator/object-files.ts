/**
 * Folder mode: where an object's bytes live on disk. The point of the mode is that a bucket
 * is a plain folder people drop files into and look at, so an ordinary name (`in/2024/a.json`)
 * is the file `<dir>/<bucket>/in/2024/a.json`. GCS names a filesystem cannot hold as such
 * path go to a side store, `<dir>/.gcs-meta/<bucket>.objects/<sha256 of the name>`, with the
 * exact name beside it in `<hash>.name`:
 *   - an empty segment (`a//b`, `/a`) or a trailing `/` (the folder placeholder `L/`),
 *   - a segment over 255 bytes (NAME_MAX; GCS allows 1,024-byte names),
 *   - a name whose path is taken by the other kind of entry: `a/b` while the object `a` is a
 *     file, or `a` while `a/` is a folder of other objects.
 * A hashed file name can never leave the side folder, so only plain paths need the traversal
 * checks of names.ts. Writes go to `<dir>/.gcs-meta/tmp/` first and are renamed into place, so
 * no suffix is reserved in a bucket folder and a rescan never sees half-written files.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { bucketNameProblem, pathInside, UnsafeNameError } from './names.ts';

export const META_DIR = '.gcs-meta';
const NAME_MAX_BYTES = 255;

export interface ObjectFile {
  path: string;
  /** In the side store: the file of the name beside the data. */
  nameFile?: string;
}

/** The segments of a name that can be a plain path, or undefined. */
function plainSegments(name: string): string[] | undefined {
  const segments = name.split('/');
  if (segments.some((s) => s === '' || Buffer.byteLength(s) > NAME_MAX_BYTES)) return undefined;
  return segments;
}

export function sideDir(dir: string, bucket: string): string {
  const problem = bucketNameProblem(bucket);
  if (problem) throw new UnsafeNameError(problem);
  return join(dir, META_DIR, `${bucket}.objects`);
}

export function sideFile(dir: string, bucket: string, name: string): ObjectFile {
  const key = createHash('sha256').update(name, 'utf8').digest('hex');
  const side = sideDir(dir, bucket);
  return { path: join(side, key), nameFile: join(side, `${key}.name`) };
}

/** The file of a stored object. */
export function fileOf(dir: string, bucket: string, name: string, side: boolean | undefined): ObjectFile {
  if (side) return sideFile(dir, bucket, name);
  return { path: pathInside(dir, bucket, ...(plainSegments(name) ?? [name])) };
}

/** Where a write of `name` goes now: its plain path if that is free, else the side store. */
export async function placeFor(dir: string, bucket: string, name: string): Promise<ObjectFile> {
  const segments = plainSegments(name);
  if (segments && (await pathIsFree(pathInside(dir, bucket), segments)))
    return { path: pathInside(dir, bucket, ...segments) };
  return sideFile(dir, bucket, name);
}

async function pathIsFree(bucketDir: string, segments: string[]): Promise<boolean> {
  for (let i = 1; i <= segments.length; i++) {
    const info = await stat(join(bucketDir, ...segments.slice(0, i))).catch(() => undefined);
    if (!info) return true;
    const last = i === segments.length;
    if (last ? info.isDirectory() : !info.isDirectory()) return false;
  }
  return true;
}

/** Writes `data` to `file` through a temporary file, so that readers see the old bytes or the new. */
export async function writeObjectFile(
  dir: string,
  file: ObjectFile,
  name: string,
  data: Buffer,
): Promise<void> {
  await mkdir(dirname(file.path), { recursive: true });
  if (file.nameFile) await writeAtomically(dir, file.nameFile, Buffer.from(name, 'utf8'));
  await writeAtomically(dir, file.path, data);
}

async function writeAtomically(dir: string, path: string, data: Buffer): Promise<void> {
  const tmp = join(dir, META_DIR, 'tmp', randomUUID());
  await mkdir(dirname(tmp), { recursive: true });
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/** After a delete: the folders left empty up to the bucket folder go too (GCS has no folders). */
export async function removeEmptyParents(dir: string, bucket: string, path: string): Promise<void> {
  const bucketDir = pathInside(dir, bucket);
  for (let parent = dirname(path); parent.startsWith(bucketDir + sep); parent = dirname(parent)) {
    if (
      !(await rmdir(parent).then(
        () => true,
        () => false,
      ))
    )
      return;
  }
}
