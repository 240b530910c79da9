/**
 * What importing a context file would change: the keys it adds, changes and removes
 * compared with the current global map (an import replaces the map wholesale).
 * Pure, so the preview is tested without a browser.
 *
 * @example
 *   diffContext({ a: 1, b: 2 }, { a: 1, b: 3, c: 4 })
 *   // { added: [{ key: 'c', after: 4 }], changed: [{ key: 'b', before: 2, after: 3 }], removed: [], unchanged: 1 }
 */
import { CONTEXT_FILE_FORMAT } from '../../../shared/context/context-file.ts';
import type { ContextMap, JsonValue } from './types.ts';

export interface ContextDiff {
  added: { key: string; after: JsonValue }[];
  changed: { key: string; before: JsonValue; after: JsonValue }[];
  removed: { key: string; before: JsonValue }[];
  unchanged: number;
}

export function diffContext(current: ContextMap, next: ContextMap): ContextDiff {
  const diff: ContextDiff = { added: [], changed: [], removed: [], unchanged: 0 };
  for (const key of Object.keys(next).sort()) {
    if (!(key in current)) diff.added.push({ key, after: next[key]! });
    else if (!sameJson(current[key]!, next[key]!))
      diff.changed.push({ key, before: current[key]!, after: next[key]! });
    else diff.unchanged++;
  }
  for (const key of Object.keys(current).sort()) {
    if (!(key in next)) diff.removed.push({ key, before: current[key]! });
  }
  return diff;
}

/** Reads an export file: `{"format":"sluice-context/v1","global":{...}}`, or explains what is wrong. */
export function parseExportFile(
  text: string,
): { ok: true; global: ContextMap; document: unknown } | { ok: false; error: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not JSON: ${(err as Error).message}` };
  }
  if (!isObject(doc)) return { ok: false, error: 'the file must hold a JSON object' };
  if (doc.format !== CONTEXT_FILE_FORMAT)
    return { ok: false, error: `not a Sluice context export (format must be "${CONTEXT_FILE_FORMAT}")` };
  if (!isObject(doc.global)) return { ok: false, error: '"global" must be a JSON object of keys to values' };
  return { ok: true, global: doc.global as ContextMap, document: doc };
}

export function sameJson(a: JsonValue, b: JsonValue): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k]!)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
