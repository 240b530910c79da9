/**
 * Rows of an Arrow record batch as plain JSON-ready values: the last step of reading
 * parquet. Work is done column by column (one tight loop per column and type, straight
 * over Arrow's buffers, no per-cell `get()`), and the slice keeps its columns
 * (`RowSlice`): JSON lines are written from them directly. When rows are asked for, each
 * is one object literal, so every row of a batch shares one hidden class and serializes fast. Values JSON cannot
 * hold are converted: 64-bit integers to numbers (decimal strings beyond 2^53), decimals
 * to numbers (decimal strings when a double would not give them back: more than 15
 * digits), dates and timestamps to RFC 3339, times of day to `HH:MM:SS.sss`, intervals to
 * ISO 8601 durations (`P1M2DT3.5S`), bytes to base64; lists become arrays, structs and
 * maps objects.
 *
 * apache-arrow is passed in (not imported) so that it loads only when parquet is read.
 *
 * @example
 *   const arrow = await import('apache-arrow');
 *   for (const batch of arrow.tableFromIPC(ipc).batches) deliver(batchRows(arrow, batch, 0, batch.numRows).rows());
 */
import { isAscii } from 'node:buffer';
import type { Data, RecordBatch } from 'apache-arrow';

type Arrow = typeof import('apache-arrow');
type Row = Record<string, unknown>;
export type Values = ArrayLike<unknown>;
/** Arrow's data as it is at run time; the library's types are generic over every type. */
// biome-ignore lint/suspicious/noExplicitAny: one shape for all Arrow types; each case reads its own buffers
type AnyData = Data<any>;

const MS_PER_DAY = 86_400_000;
/** High 32-bit words of a 64-bit integer whose value is surely within ±(2^53 - 1). */
const SAFE_HIGH_WORD = 2 ** 21;

/** Per top-level column, a conversion of each non-null value after Arrow's (see parquet-logical.ts). */
export type ColumnFixes = ReadonlyMap<string, (value: unknown) => unknown>;

/**
 * Rows held column by column, as converted: `columns[c][i]` is the value of `names[c]` in
 * row `i`. JSON lines can be written from the columns without building the rows
 * (batches.ts); `rows()` builds them, once, for everything else.
 */
export class RowSlice {
  #rows: Row[] | undefined;

  constructor(
    readonly names: readonly string[],
    readonly columns: readonly Values[],
    readonly count: number,
  ) {}

  rows(): Row[] {
    this.#rows ??= objects(this.names, this.columns, this.count);
    return this.#rows;
  }
}

/** Rows `start` to `end` (exclusive) of `batch`. */
export function batchRows(
  arrow: Arrow,
  batch: RecordBatch,
  start: number,
  end: number,
  fixes: ColumnFixes = new Map(),
): RowSlice {
  const fields = batch.schema.fields.map((field) => field.name);
  const columns = batch.data.children.map((data, c) => {
    const values = columnValues(arrow, data, start, end);
    const fix = fixes.get(fields[c]!);
    return fix ? mapValues(values, 0, end - start, (value) => (value === null ? null : fix(value))) : values;
  });
  return new RowSlice(fields, columns, end - start);
}

/** The values of rows `start` to `end` of one column, converted for JSON (null where null). */
export function columnValues(arrow: Arrow, data: AnyData, start: number, end: number): Values {
  const values = plainValues(arrow, data, start, end);
  return data.nullCount > 0 ? withNulls(values, data, start) : values;
}

function plainValues(arrow: Arrow, data: AnyData, start: number, end: number): Values {
  const { Type } = arrow;
  const type = data.type;
  switch (data.typeId) {
    case Type.Null:
      return new Array(end - start).fill(null);
    case Type.Int:
      return type.bitWidth === 64 ? int64Numbers(data.values, start, end) : data.values.subarray(start, end);
    case Type.Float:
      // Half floats are stored as raw 16-bit words; the generic reader decodes them.
      return type.precision === 0 ? generic(arrow, data, start, end) : data.values.subarray(start, end);
    case Type.Bool:
      return booleans(data, start, end);
    case Type.Decimal:
      return decimals(data.values, type.bitWidth / 32, type.scale, start, end);
    case Type.Utf8:
    case Type.LargeUtf8:
      return strings(data.values, offsets(data.valueOffsets, start, end), end - start);
    case Type.Binary:
    case Type.LargeBinary:
      return base64s(data.values, offsets(data.valueOffsets, start, end), end - start);
    case Type.FixedSizeBinary:
      return fixedBase64s(data.values, type.byteWidth, start, end);
    case Type.Date:
      return type.unit === 0
        ? mapValues(data.values, start, end, (days) => isoTime((days as number) * MS_PER_DAY))
        : mapValues(int64Numbers(data.values, start, end), 0, end - start, (ms) => isoTime(ms as number));
    case Type.Timestamp:
      return timestamps(data.values, type.unit, start, end);
    case Type.Time:
      return times(
        type.bitWidth === 64 ? int64Numbers(data.values, start, end) : data.values.subarray(start, end),
        type.unit,
      );
    case Type.Interval:
      return intervals(data.values, type.unit, start, end);
    case Type.List:
    case Type.LargeList:
      return lists(arrow, data.children[0]!, offsets(data.valueOffsets, start, end), end - start);
    case Type.FixedSizeList:
      return fixedLists(arrow, data.children[0]!, type.listSize, start, end);
    case Type.Struct:
      return objects(
        type.children.map((field: { name: string }) => field.name),
        data.children.map((child: AnyData) => columnValues(arrow, child, start, end)),
        end - start,
      );
    case Type.Map:
      return maps(arrow, data.children[0]!, offsets(data.valueOffsets, start, end), end - start);
    case Type.Dictionary:
      return dictionaryValues(arrow, data, start, end);
    default:
      return generic(arrow, data, start, end);
  }
}

/**
 * 64-bit integers (signed or not) as numbers, or decimal strings beyond 2^53; no BigInt per
 * value. Values that fit 32 bits are kept as integers (a plain array, not a Float64Array):
 * V8 then stores them untagged in the row objects instead of boxing each one as a heap
 * number, which halved allocation and made JSON.stringify of the rows faster.
 */
function int64Numbers(values: BigInt64Array | BigUint64Array, start: number, end: number): Values {
  const words = new Int32Array(values.buffer, values.byteOffset + start * 8, (end - start) * 2);
  const unsigned = values instanceof BigUint64Array;
  const out: number[] = [];
  for (let i = 0; i < end - start; i++) {
    const low = words[2 * i]!;
    const high = words[2 * i + 1]!;
    if (unsigned ? high === 0 && low >= 0 : high === low >> 31) {
      out.push(low);
      continue;
    }
    const inRange = unsigned ? high >>> 0 < SAFE_HIGH_WORD : high > -SAFE_HIGH_WORD && high < SAFE_HIGH_WORD;
    if (!inRange) return int64Slow(values, start, end, out);
    out.push(high * 4294967296 + (low >>> 0));
  }
  return out;
}

/** The rare column holding a value beyond 2^53: continues from `done` with exact BigInts. */
function int64Slow(
  values: BigInt64Array | BigUint64Array,
  start: number,
  end: number,
  done: number[],
): Values {
  const out: unknown[] = done;
  for (let i = done.length; i < end - start; i++) {
    const value = values[start + i]!;
    out.push(
      value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
        ? Number(value)
        : value.toString(),
    );
  }
  return out;
}

function booleans(data: AnyData, start: number, end: number): Values {
  const bits: Uint8Array = data.values;
  const out = new Array<boolean>(end - start);
  for (let i = 0; i < out.length; i++) {
    const bit = data.offset + start + i;
    out[i] = ((bits[bit >> 3]! >> (bit & 7)) & 1) === 1;
  }
  return out;
}

/**
 * Decimals with at most this many digits (unscaled) are numbers: a double gives any 15
 * significant digits back as they were. Longer ones are decimal strings, as exact as the
 * column (64-bit integers beyond 2^53 are strings likewise), except whole numbers a double
 * holds exactly.
 */
const DECIMAL_NUMBER_LIMIT = 10 ** 15;

/** Decimals (32 to 256 bits, little-endian words): numbers while a double keeps them, else decimal strings. */
function decimals(words: Uint32Array, stride: number, scale: number, start: number, end: number): Values {
  const divisor = 10 ** scale;
  const out = new Float64Array(end - start);
  for (let i = 0; i < out.length; i++) {
    const k = (start + i) * stride;
    let unscaled: number;
    if (stride === 1) unscaled = words[k]! | 0;
    else if (fitsTwoWords(words, k, stride) && Math.abs(words[k + 1]! | 0) < SAFE_HIGH_WORD)
      unscaled = (words[k + 1]! | 0) * 4294967296 + words[k]!;
    else return decimalsSlow(words, stride, scale, start, end, out, i);
    if (Math.abs(unscaled) >= DECIMAL_NUMBER_LIMIT && scale !== 0)
      return decimalsSlow(words, stride, scale, start, end, out, i);
    out[i] = scale > 22 ? Number(`${unscaled}e-${scale}`) : unscaled / divisor;
  }
  return out;
}

/** The rare column holding a decimal a double would change: continues from `done` with exact BigInts. */
function decimalsSlow(
  words: Uint32Array,
  stride: number,
  scale: number,
  start: number,
  end: number,
  numbers: Float64Array,
  done: number,
): Values {
  const out: unknown[] = Array.from(numbers.subarray(0, done));
  for (let i = done; i < end - start; i++) {
    const k = (start + i) * stride;
    let value = 0n;
    for (let w = stride - 1; w >= 0; w--) value = (value << 32n) | BigInt(words[k + w]!);
    value = BigInt.asIntN(stride * 32, value);
    const magnitude = value < 0n ? -value : value;
    if (scale === 0 && magnitude <= BigInt(Number.MAX_SAFE_INTEGER)) out.push(Number(value));
    else if (magnitude < BigInt(DECIMAL_NUMBER_LIMIT)) out.push(Number(`${value}e${-scale}`));
    else out.push(decimalText(value, scale));
  }
  return out;
}

/** `unscaled` / 10^scale written out exactly: all the column's decimal places. */
function decimalText(unscaled: bigint, scale: number): string {
  const sign = unscaled < 0n ? '-' : '';
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString();
  if (scale <= 0) return `${sign}${digits}${'0'.repeat(-scale)}`;
  const padded = digits.padStart(scale + 1, '0');
  return `${sign}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

/** Times of day (Arrow's TimeUnit: 0 seconds ... 3 nanoseconds) as `HH:MM:SS.sss`, like timestamps. */
function times(values: Values, unit: number): Values {
  const perMs = [1 / 1000, 1, 1000, 1_000_000][unit] ?? 1;
  return mapValues(values, 0, values.length, (value) => {
    const ms = Math.floor(Number(value) / perMs);
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
  });
}

/**
 * Intervals as ISO 8601 durations: months, days and time (`P1M2DT3.5S`, `PT0S`), each
 * kept apart as parquet keeps them (a month is not a number of days). Arrow's
 * IntervalUnit: 0 months, 1 days and milliseconds, 2 months, days and nanoseconds.
 */
function intervals(words: Int32Array, unit: number, start: number, end: number): Values {
  const stride = unit === 0 ? 1 : unit === 1 ? 2 : 4;
  const out = new Array<string>(end - start);
  for (let i = 0; i < out.length; i++) {
    const k = (start + i) * stride;
    if (unit === 0) out[i] = duration(words[k]!, 0, 0n, 1n);
    else if (unit === 1) out[i] = duration(0, words[k]!, BigInt(words[k + 1]!), 1000n);
    else
      out[i] = duration(
        words[k]!,
        words[k + 1]!,
        (BigInt(words[k + 3]!) << 32n) | BigInt(words[k + 2]! >>> 0),
        1_000_000_000n,
      );
  }
  return out;
}

function duration(months: number, days: number, time: bigint, perSecond: bigint): string {
  let out = 'P';
  if (months !== 0) out += `${months}M`;
  if (days !== 0) out += `${days}D`;
  if (time !== 0n) {
    const sign = time < 0n ? '-' : '';
    const magnitude = time < 0n ? -time : time;
    const places = perSecond.toString().length - 1;
    const fraction = (magnitude % perSecond).toString().padStart(places, '0').replace(/0+$/, '');
    out += `T${sign}${magnitude / perSecond}${fraction ? `.${fraction}` : ''}S`;
  }
  return out === 'P' ? 'PT0S' : out;
}

/** The words above the second are the sign extension of the second: the value fits 64 bits. */
function fitsTwoWords(words: Uint32Array, k: number, stride: number): boolean {
  const sign = (words[k + 1]! | 0) < 0 ? 0xffffffff : 0;
  for (let w = 2; w < stride; w++) if (words[k + w] !== sign) return false;
  return true;
}

/** Offsets of rows start..end (end + 1 entries) as numbers (large types store them as BigInts). */
function offsets(valueOffsets: Int32Array | BigInt64Array, start: number, end: number): ArrayLike<number> {
  const slice = valueOffsets.subarray(start, end + 1);
  return slice instanceof BigInt64Array ? Float64Array.from(slice, Number) : slice;
}

/** UTF-8 strings; ASCII text (the usual case) is decoded once per column and sliced. */
function strings(bytes: Uint8Array, at: ArrayLike<number>, count: number): Values {
  const first = at[0]!;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset + first, at[count]! - first);
  const out = new Array<string>(count);
  if (isAscii(buffer)) {
    const text = buffer.toString('latin1');
    for (let i = 0; i < count; i++) out[i] = text.slice(at[i]! - first, at[i + 1]! - first);
  } else {
    for (let i = 0; i < count; i++) out[i] = buffer.toString('utf8', at[i]! - first, at[i + 1]! - first);
  }
  return out;
}

function base64s(bytes: Uint8Array, at: ArrayLike<number>, count: number): Values {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = buffer.toString('base64', at[i]!, at[i + 1]!);
  return out;
}

function fixedBase64s(bytes: Uint8Array, width: number, start: number, end: number): Values {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<string>(end - start);
  for (let i = 0; i < out.length; i++)
    out[i] = buffer.toString('base64', (start + i) * width, (start + i + 1) * width);
  return out;
}

/** RFC 3339 with milliseconds, like `Date.toISOString` (sub-millisecond digits are dropped). */
function timestamps(values: BigInt64Array, unit: number, start: number, end: number): Values {
  // Arrow's TimeUnit: 0 seconds, 1 milliseconds, 2 microseconds, 3 nanoseconds.
  if (unit <= 1) {
    const scale = unit === 0 ? 1000 : 1;
    return mapValues(int64Numbers(values, start, end), 0, end - start, (v) => isoTime((v as number) * scale));
  }
  const divisor = unit === 2 ? 1000n : 1_000_000n;
  return mapValues(values, start, end, (v) => isoTime(Number((v as bigint) / divisor)));
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

function lists(arrow: Arrow, child: AnyData, at: ArrayLike<number>, count: number): Values {
  const items = columnValues(arrow, child, at[0]!, at[count]!);
  const out = new Array<unknown[]>(count);
  for (let i = 0; i < count; i++)
    out[i] = Array.prototype.slice.call(items, at[i]! - at[0]!, at[i + 1]! - at[0]!);
  return out;
}

function fixedLists(arrow: Arrow, child: AnyData, size: number, start: number, end: number): Values {
  const items = columnValues(arrow, child, start * size, end * size);
  const out = new Array<unknown[]>(end - start);
  for (let i = 0; i < out.length; i++) out[i] = Array.prototype.slice.call(items, i * size, (i + 1) * size);
  return out;
}

/** A map is a list of key/value entries; it becomes an object keyed by the keys as text. */
function maps(arrow: Arrow, entries: AnyData, at: ArrayLike<number>, count: number): Values {
  const keys = columnValues(arrow, entries.children[0]!, at[0]!, at[count]!);
  const values = columnValues(arrow, entries.children[1]!, at[0]!, at[count]!);
  const out = new Array<Row>(count);
  for (let i = 0; i < count; i++) {
    const row: Row = {};
    for (let e = at[i]! - at[0]!; e < at[i + 1]! - at[0]!; e++) setOwn(row, String(keys[e]), values[e]);
    out[i] = row;
  }
  return out;
}

/** Dictionary-encoded values: each dictionary is converted once (cached), then indexed. */
function dictionaryValues(arrow: Arrow, data: AnyData, start: number, end: number): Values {
  const vector = data.dictionary!;
  let dictionary = dictionaries.get(vector);
  if (!dictionary) {
    dictionary = [];
    for (const chunk of vector.data as AnyData[])
      for (const value of Array.from(columnValues(arrow, chunk, 0, chunk.length))) dictionary.push(value);
    dictionaries.set(vector, dictionary);
  }
  const indices: ArrayLike<number | bigint> = data.values.subarray(start, end);
  const out = new Array<unknown>(end - start);
  for (let i = 0; i < out.length; i++) out[i] = dictionary[Number(indices[i])];
  return out;
}

const dictionaries = new WeakMap<object, unknown[]>();

/** Any type without a fast path (durations, unions, views, half floats): Arrow's own reader. */
function generic(arrow: Arrow, data: AnyData, start: number, end: number): Values {
  const vector = arrow.makeVector(data);
  const out = new Array<unknown>(end - start);
  for (let i = 0; i < out.length; i++) out[i] = toJsonValue(vector.get(start + i));
  return out;
}

function toJsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<unknown>, toJsonValue);
  if (Array.isArray(value)) return value.map(toJsonValue);
  const asJson = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof asJson === 'function') return toJsonValue(asJson.call(value));
  const out: Row = {};
  for (const [k, v] of Object.entries(value)) setOwn(out, k, toJsonValue(v));
  return out;
}

function withNulls(values: Values, data: AnyData, start: number): Values {
  const bits: Uint8Array = data.nullBitmap;
  const out = Array.from(values);
  for (let i = 0; i < out.length; i++) {
    const bit = data.offset + start + i;
    if (((bits[bit >> 3]! >> (bit & 7)) & 1) === 0) out[i] = null;
  }
  return out;
}

function mapValues(values: Values, start: number, end: number, map: (value: unknown) => unknown): Values {
  const out = new Array<unknown>(end - start);
  for (let i = 0; i < out.length; i++) out[i] = map(values[start + i]);
  return out;
}

/** `count` objects whose fields are `names`, the values taken from `columns` (one per name). */
function objects(names: readonly string[], columns: readonly Values[], count: number): Row[] {
  const make = rowMaker(names);
  const out = new Array<Row>(count);
  for (let i = 0; i < count; i++) out[i] = make(columns, i);
  return out;
}

const makers = new Map<string, (columns: readonly Values[], i: number) => Row>();

/**
 * A function building one row as an object literal with the column names as keys. Compiled
 * once per schema: a literal gets all its fields in one allocation and one shared shape,
 * which made building and serializing rows about twice as fast as adding fields one by one.
 * Names are embedded as JSON string literals (valid JS string literals), so any name is safe;
 * `__proto__` (a literal would set the prototype) and repeated names take the slow path.
 */
function rowMaker(names: readonly string[]): (columns: readonly Values[], i: number) => Row {
  const key = JSON.stringify(names);
  let make = makers.get(key);
  if (make) return make;
  if (names.includes('__proto__') || new Set(names).size !== names.length) {
    make = (columns, i) => {
      const row: Row = {};
      for (let c = 0; c < names.length; c++) setOwn(row, names[c]!, columns[c]![i]);
      return row;
    };
  } else {
    const fields = names.map((name, c) => `${JSON.stringify(name)}: columns[${c}][i]`);
    make = new Function('columns', 'i', `return { ${fields.join(', ')} };`) as (
      columns: readonly Values[],
      i: number,
    ) => Row;
  }
  if (makers.size < 1000) makers.set(key, make);
  return make;
}

function setOwn(row: Row, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true });
  else row[key] = value;
}
