/**
 * Turns a CEL value into a JSON value for an event field: CEL integers and unsigned integers
 * are BigInts (numbers when they fit, else decimal strings), bytes become base64, timestamps
 * RFC 3339, durations their CEL text (`1.5s`), types their name (`double`), an optional its
 * value (null when empty). Maps and lists are copied, so that a field set from another
 * (`set: {copy: event.http}`) never shares a map that a later action changes.
 *
 * A value JSON cannot hold (NaN, an infinity) and a value larger than MAX_SET_VALUE_BYTES of
 * JSON are errors, not silently `null` or gigabytes: a list holding the same list many times
 * (`event.xs.map(x, event.xs)`) is small in memory and quadratic once copied.
 *
 * @example
 *   celToJson(42n); // 42
 */
import { Environment, Optional } from '@marcbachmann/cel-js';

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The longest line the gcs input reads (split.ts MAX_LINE_BYTES): no event holds more. */
export const MAX_SET_VALUE_BYTES = 8 * 1024 * 1024;

// cel-js does not export its unsigned integer and type classes: take them from values it makes.
const sample = new Environment();
const UnsignedInt = (sample.parse('uint(0)')() as object).constructor;
const CelType = (sample.parse('type(0)')() as object).constructor;

/** JSON bytes left for the value being converted: at least what is counted is written. */
let budget = 0;

export function celToJson(value: unknown): unknown {
  budget = MAX_SET_VALUE_BYTES;
  return toJson(value);
}

function spend(bytes: number): void {
  budget -= bytes;
  if (budget < 0)
    throw new Error(
      `the value is larger than ${MAX_SET_VALUE_BYTES / 1024 / 1024} MiB of JSON, the most an event may hold`,
    );
}

function toJson(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      spend(value.length + 2);
      return value;
    case 'boolean':
      spend(4);
      return value;
    case 'number':
      if (!Number.isFinite(value))
        throw new Error(`the value is ${value}, which JSON cannot hold (check for a division by zero)`);
      spend(1);
      return value;
    case 'bigint':
      spend(1);
      return integer(value);
    case 'undefined':
      spend(4);
      return null;
    case 'object':
      return objectToJson(value);
    default:
      return String(value);
  }
}

function integer(value: bigint): number | string {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

function objectToJson(value: object | null): unknown {
  spend(2);
  if (value === null) return null;
  if (Array.isArray(value)) {
    spend(value.length - 1); // commas
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = toJson(value[i]);
    return out;
  }
  if (value instanceof Uint8Array) {
    spend(Math.ceil(value.length / 3) * 4);
    return Buffer.from(value).toString('base64');
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Optional) return value.hasValue() ? toJson(value.value()) : null;
  if (value instanceof UnsignedInt) return integer(value.valueOf() as bigint);
  if (value instanceof CelType) return String((value as { name: string }).name);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) setField(out, String(k), toJson(v));
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) setField(out, key, toJson((value as Record<string, unknown>)[key]));
    return out;
  }
  // Durations print as CEL writes them.
  return String(value);
}

function setField(out: Record<string, unknown>, key: string, value: unknown): void {
  spend(key.length + 3);
  // An own `__proto__` field (JSON.parse makes them) stays a field, never the copy's prototype.
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
