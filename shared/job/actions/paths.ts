/**
 * Dotted field paths of actions (`http.status` is the `status` field of the map in
 * `http`). Segments are field names; names every JavaScript object has (`__proto__`,
 * `constructor`) are refused, so no path reaches a prototype. Reads and writes use own
 * properties only.
 *
 * @example
 *   const path = parseFieldPath('http.status');   // ['http', 'status']
 *   setPath(event, path, 404);                     // creates event.http when missing
 */
import { isPrototypeName } from '../../auth/names.ts';

export const FIELD_PATH = /^[A-Za-z0-9_@$-]+(\.[A-Za-z0-9_@$-]+)*$/;
export const MAX_FIELD_PATH = 256;

/** Why `text` is not a field path, or undefined when it is one. */
export function fieldPathProblem(text: string): string | undefined {
  if (text.length === 0 || text.length > MAX_FIELD_PATH || !FIELD_PATH.test(text))
    return 'must be a field name or a dotted path of them (letters, digits, _ @ $ -), e.g. http.status';
  const reserved = text.split('.').find(isPrototypeName);
  if (reserved) return `\`${reserved}\` is reserved (it is a property of every JavaScript object)`;
  return undefined;
}

export function parseFieldPath(text: string): string[] {
  return text.split('.');
}

type Json = Record<string, unknown>;

function isMap(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path`, or undefined when a segment is missing or not a map. */
export function getPath(event: Json, path: readonly string[]): unknown {
  let value: unknown = event;
  for (const segment of path) {
    if (!isMap(value) || !Object.hasOwn(value, segment)) return undefined;
    value = value[segment];
  }
  return value;
}

/** Sets the value at `path`, creating maps on the way; throws when a segment holds a non-map. */
export function setPath(event: Json, path: readonly string[], value: unknown): void {
  let target = event;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i]!;
    const next = Object.hasOwn(target, segment) ? target[segment] : undefined;
    if (next === undefined || next === null) {
      const created: Json = {};
      target[segment] = created;
      target = created;
    } else if (isMap(next)) target = next;
    else throw new PathError(`${path.slice(0, i + 1).join('.')} is not a map`);
  }
  target[path[path.length - 1]!] = value;
}

/** Removes the field at `path`; returns whether it was there. */
export function deletePath(event: Json, path: readonly string[]): boolean {
  let target: unknown = event;
  for (let i = 0; i < path.length - 1; i++) {
    if (!isMap(target) || !Object.hasOwn(target, path[i]!)) return false;
    target = target[path[i]!];
  }
  const last = path[path.length - 1]!;
  if (!isMap(target) || !Object.hasOwn(target, last)) return false;
  delete target[last];
  return true;
}

export class PathError extends Error {
  override name = 'PathError';
}
