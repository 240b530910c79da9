/**
 * Context values have a JSON type (string, number, boolean, object, array); the editor
 * lets the operator pick one and type the value as text. These convert both ways and
 * say what is wrong with a value that does not fit its type.
 *
 * @example
 *   parseTyped('number', '42') // { ok: true, value: 42 }
 *   parseTyped('json', '{"a": 1')  // { ok: false, error: 'not valid JSON: …' }
 */
import type { JsonValue } from './types.ts';

export type ValueType = 'string' | 'number' | 'boolean' | 'json';
export const VALUE_TYPES: { value: ValueType; label: string }[] = [
  { value: 'string', label: 'string' },
  { value: 'number', label: 'number' },
  { value: 'boolean', label: 'boolean' },
  { value: 'json', label: 'object / array (JSON)' },
];

export function typeName(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value;
}

export function editorType(value: JsonValue): ValueType {
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' ? (t as ValueType) : 'json';
}

export function toText(value: JsonValue): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value, null, 2);
}

export function parseTyped(
  type: ValueType,
  text: string,
): { ok: true; value: JsonValue } | { ok: false; error: string } {
  switch (type) {
    case 'string':
      return { ok: true, value: text };
    case 'number': {
      const n = Number(text.trim());
      return text.trim() !== '' && Number.isFinite(n)
        ? { ok: true, value: n }
        : { ok: false, error: 'not a number' };
    }
    case 'boolean':
      return text === 'true' || text === 'false'
        ? { ok: true, value: text === 'true' }
        : { ok: false, error: 'choose true or false' };
    case 'json': {
      try {
        const value = JSON.parse(text) as JsonValue;
        if (value === null || typeof value !== 'object')
          return {
            ok: false,
            error: 'an object or array is expected here (pick another type for plain values)',
          };
        return { ok: true, value };
      } catch (err) {
        return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
      }
    }
  }
}
