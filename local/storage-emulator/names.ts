/**
 * Bucket and object names that may become paths. In folder mode an object is the file
 * `<dir>/<bucket>/<name>`, and any local process can send the emulator a name, so a name
 * must never resolve outside its bucket's folder. GCS itself refuses the names `.` and `..`
 * and CR/LF; the emulator is stricter (no `.`/`..` segment, backslash or NUL anywhere) because
 * here a name is a path. Every refusal is a 400, as GCS answers for names it will not store.
 */
import { dirname, resolve, sep } from 'node:path';

export class UnsafeNameError extends Error {}

const MAX_OBJECT_NAME_BYTES = 1024;
const FORBIDDEN_IN_OBJECT_NAMES = ['\0', '\r', '\n', '\\'];
const FORBIDDEN_IN_BUCKET_NAMES = [...FORBIDDEN_IN_OBJECT_NAMES, '/'];

const hasAny = (name: string, characters: string[]) => characters.some((c) => name.includes(c));

/** Why an object name cannot be stored, or undefined when it can. */
export function objectNameProblem(name: string): string | undefined {
  if (name === '') return 'Required parameter: name';
  if (Buffer.byteLength(name) > MAX_OBJECT_NAME_BYTES) return 'The object name is too long.';
  if (hasAny(name, FORBIDDEN_IN_OBJECT_NAMES))
    return 'Object names may not contain NUL, carriage return, line feed or backslash.';
  if (name.split('/').some((segment) => segment === '.' || segment === '..'))
    return 'Object names may not contain "." or ".." path segments.';
  return undefined;
}

/**
 * Why a bucket name cannot be a folder of the emulator, or undefined. Looser than the GCS
 * rules for creating buckets, since existing subfolders (any name) are served as buckets.
 */
export function bucketNameProblem(name: string): string | undefined {
  if (name === '' || name.startsWith('.') || hasAny(name, FORBIDDEN_IN_BUCKET_NAMES))
    return `Invalid bucket name: '${name}'`;
  return undefined;
}

/**
 * `<root>/<bucket>/<segments...>`, refusing anything that resolves outside `<root>/<bucket>/`:
 * the last line of defence behind the name checks above.
 */
export function pathInside(root: string, bucket: string, ...segments: string[]): string {
  const problem = bucketNameProblem(bucket);
  if (problem) throw new UnsafeNameError(problem);
  const bucketDir = resolve(root, bucket);
  if (dirname(bucketDir) !== resolve(root)) throw new UnsafeNameError(`Invalid bucket name: '${bucket}'`);
  if (segments.length === 0) return bucketDir;
  const file = resolve(bucketDir, ...segments);
  if (!file.startsWith(bucketDir + sep))
    throw new UnsafeNameError(`Invalid object name: '${segments.join('/')}'`);
  return file;
}
