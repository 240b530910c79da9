/**
 * Turns a CEL value into a JSON value for an event field: CEL integers are BigInts
 * (numbers when they fit, else decimal strings), bytes become base64, timestamps RFC 3339,
 * durations their CEL text (`1.5s`). Maps and lists are copied, so that a field set from
 * another (`set: {copy: event.http}`) never shares a map that a later action changes.
 *
 * @example
 *   celToJson(42n); // 42
 */

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function celToJson(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
    case 'undefined':
      return null;
    case 'object':
      return objectToJson(value);
    default:
      return String(value);
  }
}

function objectToJson(value: object | null): unknown {
  if (value === null) return null;
  if (Array.isArray(value)) return value.map(celToJson);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) {
      if (String(k) === '__proto__')
        Object.defineProperty(out, '__proto__', {
          value: celToJson(v),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[String(k)] = celToJson(v);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const converted = celToJson((value as Record<string, unknown>)[key]);
      // An own `__proto__` field (JSON.parse makes them) stays a field, never the copy's prototype.
      if (key === '__proto__')
        Object.defineProperty(out, key, {
          value: converted,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[key] = converted;
    }
    return out;
  }
  // Durations, unsigned integers and types print as CEL writes them.
  return String(value);
}
