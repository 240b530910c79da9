/**
 * Context maps (CONTRACT section 2): keys `^[A-Za-z_][A-Za-z0-9_-]{0,127}$` (`job` and
 * `worker` are built in; names every object answers to, like `__proto__`, `constructor` or
 * `toString`, and `prototype` never allowed), JSON values nested
 * at most 32 deep, at most 256 KiB serialized. Updates merge key by key; `null` deletes.
 *
 * @example
 *   applyUpdate({ a: 1, b: 2 }, { b: null, c: 3 }); // { a: 1, c: 3 }
 */
import { z } from 'zod';
import { isPrototypeName } from '../auth/names.ts';
import { ApiError, type ErrorDetail } from '../errors.ts';
import { CONTEXT_KEY } from '../job/fields.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type ContextMap = Record<string, JsonValue>;

export const RESERVED_KEYS = ['job', 'worker'] as const;
export const MAX_DEPTH = 32;
export const MAX_MAP_BYTES = 256 * 1024;

/** Problems with a key, or undefined when it is fine. */
export function keyProblem(key: string): string | undefined {
  if (isPrototypeName(key) || key === 'prototype')
    return `\`${key}\` is reserved (it is a property of every JavaScript object)`;
  if ((RESERVED_KEYS as readonly string[]).includes(key))
    return `\`${key}\` is reserved: job and worker are built in`;
  if (!CONTEXT_KEY.test(key))
    return 'keys start with a letter or _ and use letters, digits, _ and - (at most 128)';
  return undefined;
}

/** Validates an update body: a JSON object of keys to values (`null` deletes, when allowed). */
export function validateContextMap(value: unknown, options: { allowNull: boolean }): ContextMap {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ApiError.invalid('the body must be a JSON object of context keys to values', [
      {
        path: '',
        message: `expected a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
      },
    ]);
  }
  const details: ErrorDetail[] = [];
  for (const [key, item] of Object.entries(value)) {
    const problem = keyProblem(key);
    if (problem) details.push({ path: key, message: problem });
    else if (item === null && !options.allowNull)
      details.push({ path: key, message: 'null is not a context value' });
    else if (depthOf(item) > MAX_DEPTH)
      details.push({ path: key, message: `values may nest at most ${MAX_DEPTH} levels` });
  }
  if (details.length)
    throw ApiError.invalid(`invalid context: ${details[0]!.path}: ${details[0]!.message}`, details);
  return value as ContextMap;
}

export function assertMapSize(map: ContextMap): void {
  const bytes = new TextEncoder().encode(JSON.stringify(map)).length;
  if (bytes > MAX_MAP_BYTES) {
    throw ApiError.invalid(`the context map would be ${bytes} bytes; the limit is 256 KiB`, [
      { path: '', message: `at most ${MAX_MAP_BYTES} bytes serialized` },
    ]);
  }
}

/** Merges an update into a map: each key's value is replaced (objects are not deep-merged); `null` deletes. */
export function applyUpdate(current: ContextMap, update: ContextMap): ContextMap {
  const next: ContextMap = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/**
 * How deep a value nests (a scalar is 1), counted no further than one past MAX_DEPTH: the
 * walk never descends deeper than that, so no value can overflow the stack.
 */
function depthOf(value: unknown, depth = 1): number {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return depth;
  let max = depth;
  for (const item of Object.values(value)) {
    max = Math.max(max, depthOf(item, depth + 1));
    if (max > MAX_DEPTH) return max;
  }
  return max;
}

/** The OpenAPI shape of a context map (validation itself is `validateContextMap`). */
export const ContextMapSchema = z.record(z.string(), z.unknown()).describe('Context keys to JSON values');

/**
 * Request bodies are taken as parsed JSON, unchanged: rebuilding the object (as a zod
 * record would) turns a `__proto__` key into a prototype instead of refusing it.
 */
export const RawContextMapSchema = z.unknown().describe('Context keys to JSON values');
