/**
 * The JSON-lines fast path, in AssemblyScript (compiled to WebAssembly with SIMD by
 * `npm run build:wasm`; the JavaScript side is ../json-splicer.ts). It checks that a line's
 * bytes are one JSON object, without building it, and copies each such line to the output
 * with the job's metadata fields spliced in before its closing brace (`spliceLines`, for
 * NDJSON). `spliceArray` does the same for the objects of a JSON array, one line each, and
 * `spliceColumns` writes the lines of a parquet slice from the JSON of its columns.
 *
 * Why WebAssembly: this loop runs over every byte of every line. Written in TypeScript it
 * was the largest cost of reading gzip NDJSON (about 0.45 µs for a 200-byte line, plus a
 * few native calls per line to copy it); here a chunk's lines cost one call, strings are
 * skipped 16 bytes at a time, and the copies are `memory.copy` (`npm run bench:gcs`,
 * figures in docs/inputs/gcs.md).
 *
 * It is never more lenient than `JSON.parse` (RFC 8259): whatever it accepts, `JSON.parse`
 * accepts as an object. The bytes must be valid UTF-8, which the caller checks for a whole
 * chunk at once. It refuses some valid lines, leaving them to the slow path: nesting
 * deeper than MAX_DEPTH, a top-level key written with escapes, or a top-level key among
 * the reserved names, so that splicing never makes a key appear twice.
 * ../json-splicer.test.ts checks both directions, with a seeded fuzz.
 *
 * Memory is laid out by the caller; nothing here allocates. What a splice adds and
 * refuses is one `config` block of five u32: the suffix's address and length, whether `{}`
 * leaves out the suffix's first byte (its comma), and the reserved-name table's address and
 * entry count; the table holds pairs of u32 (address, length). SIMD loads and short
 * copies read and write up to 16 bytes past their end, so the caller leaves 32 bytes of
 * room after its input and its output.
 */

/** Deepest nesting scanned; deeper lines take the slow path (json-splicer.ts MAX_SCAN_DEPTH). */
const MAX_DEPTH: i32 = 256;

/** Whether each open container is an object (1) or an array (0). */
const containers = memory.data(MAX_DEPTH);

/** Where the caller's memory may start: after this module's own data. */
export function heapBase(): usize {
  return __heap_base;
}

let written: usize = 0;

/** The end of what the last splice wrote. */
export function outputEnd(): usize {
  return written;
}

/**
 * Copies lines to `out` while each is a JSON object this scanner vouches for: the line up
 * to its closing brace, then the suffix (`,"field":value…}\n`; for `{}` without its comma
 * when the config says so). `spans` holds `count` pairs of
 * u32 (start, end). Returns how many lines were copied; the first line not copied must
 * take the slow path. `outputEnd()` tells where the output ends.
 */
export function spliceLines(spans: usize, count: i32, out: usize, config: usize): i32 {
  let o = out;
  for (let k = 0; k < count; k++) {
    const start = <usize>load<u32>(spans + (<usize>k << 3));
    const end = <usize>load<u32>(spans + (<usize>k << 3) + 4);
    const after = scanObject(start, end, config);
    if (after == 0) {
      written = o;
      return k;
    }
    o = appendSpliced(o, start, after - 1, config);
  }
  written = o;
  return count;
}

/**
 * Appends at `o` the object `[start, close]` with the config's suffix in place of its
 * closing brace (for `{}` without the suffix's comma, when the config says so); returns
 * the end of what it wrote.
 */
function appendSpliced(o: usize, start: usize, close: usize, config: usize): usize {
  copyLine(o, start, close - start);
  o += close - start;
  const from: usize = skipsComma(config) && isEmptyObject(start, close) ? 1 : 0;
  const length = suffixLength(config) - from;
  copy(o, suffixAt(config) + from, length);
  return o + length;
}

/**
 * `copy` for a line: 16 bytes at a time up to LINE_COPY_MAX bytes, `memory.copy` above (a
 * call out of WebAssembly, which costs more than the moves of a line of a few hundred bytes).
 */
// @ts-ignore: decorator
@inline
function copyLine(to: usize, from: usize, length: usize): void {
  if (length <= 32 || length > LINE_COPY_MAX) {
    copy(to, from, length);
    return;
  }
  const last = length - 16;
  for (let i: usize = 0; i < last; i += 16) v128.store(to + i, v128.load(from + i));
  v128.store(to + last, v128.load(from + last));
}

const LINE_COPY_MAX: usize = 1024;

// The fields of a `config` block.
// @ts-ignore: decorator
@inline
function suffixAt(config: usize): usize {
  return <usize>load<u32>(config);
}
// @ts-ignore: decorator
@inline
function suffixLength(config: usize): usize {
  return <usize>load<u32>(config + 4);
}
// @ts-ignore: decorator
@inline
function skipsComma(config: usize): bool {
  return load<u32>(config + 8) != 0;
}
// @ts-ignore: decorator
@inline
function reservedTable(config: usize): usize {
  return <usize>load<u32>(config + 12);
}
// @ts-ignore: decorator
@inline
function reservedEntries(config: usize): i32 {
  return <i32>load<u32>(config + 16);
}

/**
 * Copies the elements of a JSON array of objects (the rows of a parquet slice, as
 * `JSON.stringify` wrote them) to `out` as lines, each with the suffix in place of its
 * closing brace as in `spliceLines`. Returns how many elements were copied: it stops at
 * the first element that is not an object, or that has a reserved top-level key or one
 * written with escapes; the caller serializes that element and every one after it itself.
 *
 * The text is trusted to be JSON, as `JSON.stringify` writes it (no whitespace), so this
 * does not check it: it only finds where each element ends, jumping 16 bytes at a time to
 * the next character that can open or close something (`"`, `\`, `{`, `}`, `[`, `]`, `,`).
 */
export function spliceArray(start: usize, end: usize, out: usize, config: usize): i32 {
  const reserved = reservedTable(config);
  const reservedCount = reservedEntries(config);
  let o = out;
  let k = 0;
  if (start < end && load<u8>(start) == OPEN_ARRAY) {
    let i = start + 1;
    while (i < end && load<u8>(i) == OPEN_OBJECT) {
      const element = i;
      const after = trustedContainerEnd(element, end, reserved, reservedCount);
      if (after == 0) break;
      o = appendSpliced(o, element, after - 1, config);
      k++;
      if (after >= end || load<u8>(after) != COMMA) break;
      i = after + 1;
    }
  }
  written = o;
  return k;
}

/**
 * Writes `rows` JSON lines from the columns of a slice, each column given as the JSON
 * array of its values (as `JSON.stringify` wrote it): line `i` is `{`, then for each
 * column its key (`"name":`, after a comma from the second on) and its `i`-th value, then
 * the suffix (which closes the object; without its comma when there are no columns and the
 * config says so). The text is trusted to be JSON, as in `spliceArray`.
 * `columns` is a table of `count` entries of four u32: the key's address and length, the
 * address of the column's next value (moved along as rows are written) and the end of
 * its text.
 */
export function spliceColumns(columns: usize, count: i32, rows: i32, out: usize, config: usize): void {
  let o = out;
  const from: usize = skipsComma(config) && count == 0 ? 1 : 0;
  const suffix = suffixAt(config) + from;
  const tail = suffixLength(config) - from;
  // Each column's text opens its array with `[`.
  for (let c = 0; c < count; c++) {
    const entry = columns + (<usize>c << 4);
    store<u32>(entry + 8, load<u32>(entry + 8) + 1);
  }
  for (let r = 0; r < rows; r++) {
    store<u8>(o++, OPEN_OBJECT);
    for (let c = 0; c < count; c++) {
      const entry = columns + (<usize>c << 4);
      if (c > 0) store<u8>(o++, COMMA);
      const keyLength = <usize>load<u32>(entry + 4);
      copy(o, <usize>load<u32>(entry), keyLength);
      o += keyLength;
      const value = <usize>load<u32>(entry + 8);
      const after = trustedValueEnd(value, <usize>load<u32>(entry + 12));
      copy(o, value, after - value);
      o += after - value;
      // Past the comma (or the closing `]`) after the value.
      store<u32>(entry + 8, <u32>(after + 1));
    }
    copy(o, suffix, tail);
    o += tail;
  }
  written = o;
}

/**
 * `memory.copy` for the short keys and values of columns: one or two 16-byte moves below 33
 * bytes (a `memory.copy` call costs more than that). It may read and write up to 16 bytes
 * past `length`.
 */
// @ts-ignore: decorator
@inline
function copy(to: usize, from: usize, length: usize): void {
  if (length <= 16) {
    v128.store(to, v128.load(from));
  } else if (length <= 32) {
    v128.store(to, v128.load(from));
    v128.store(to + 16, v128.load(from + 16));
  } else {
    memory.copy(to, from, length);
  }
}

/** Just past the JSON value that starts at `i`, in text trusted to be JSON without whitespace. */
function trustedValueEnd(i: usize, n: usize): usize {
  const c: u32 = load<u8>(i);
  if (c == QUOTE) {
    const end = skipString(i + 1, n);
    return end == 0 ? n : end;
  }
  if (c != OPEN_OBJECT && c != OPEN_ARRAY) {
    // A number, `true`, `false` or `null`: up to the separator after it.
    while (i < n) {
      const d: u32 = load<u8>(i);
      if (d == COMMA || d == CLOSE_ARRAY || d == CLOSE_OBJECT) break;
      i++;
    }
    return i;
  }
  const end = trustedContainerEnd(i, n, 0, 0);
  return end == 0 ? n : end;
}

/**
 * Just past the object or array that opens at `i`, in text trusted to be JSON without
 * whitespace. With `reserved` (not 0), the keys of the object at `i` are checked as in
 * `skipKey`: 0 when one is reserved or written with escapes.
 */
function trustedContainerEnd(i: usize, n: usize, reserved: usize, reservedCount: i32): usize {
  const quotes = i8x16.splat(<i8>QUOTE);
  const commas = i8x16.splat(<i8>COMMA);
  const opens = i8x16.splat(<i8>OPEN_OBJECT);
  const closes = i8x16.splat(<i8>CLOSE_OBJECT);
  const openArrays = i8x16.splat(<i8>OPEN_ARRAY);
  const closeArrays = i8x16.splat(<i8>CLOSE_ARRAY);
  const checksKeys = reserved != 0;
  let depth: i32 = 0;
  while (i < n) {
    const v = v128.load(i);
    const structural = v128.or(
      v128.or(v128.or(i8x16.eq(v, quotes), i8x16.eq(v, commas)), v128.or(i8x16.eq(v, opens), i8x16.eq(v, closes))),
      v128.or(i8x16.eq(v, openArrays), i8x16.eq(v, closeArrays)),
    );
    const bits = i8x16.bitmask(structural);
    if (bits == 0) {
      i += 16;
      continue;
    }
    i += <usize>ctz<i32>(bits);
    if (i >= n) return 0;
    const c: u32 = load<u8>(i++);
    if (c == QUOTE) {
      i = skipString(i, n);
      if (i == 0) return 0;
    } else if (c == OPEN_OBJECT || c == OPEN_ARRAY) {
      // A key of the object at `i` follows its `{` (unless it is `{}`) and each comma in it.
      if (++depth == 1 && checksKeys && i < n && load<u8>(i) != CLOSE_OBJECT) {
        i = skipKey(i, n, reserved, reservedCount);
        if (i == 0) return 0;
      }
    } else if (c == COMMA) {
      if (depth == 1 && checksKeys) {
        i = skipKey(i, n, reserved, reservedCount);
        if (i == 0) return 0;
      }
    } else if (--depth == 0) {
      return i;
    }
  }
  return 0;
}

/**
 * Just past the closing `}` when `[start, end)` is exactly one JSON object (surrounding
 * JSON whitespace allowed) none of whose top-level keys is reserved; 0 otherwise.
 */
export function scanObject(start: usize, end: usize, config: usize): usize {
  const after = objectEnd(skipSpace(start, end), end, reservedTable(config), reservedEntries(config), 0);
  return after != 0 && skipSpace(after, end) == end ? after : 0;
}

/**
 * Just past the closing `}` of the JSON object that starts at `i` and ends before `n`,
 * none of whose top-level keys is reserved; 0 when there is none.
 */
function objectEnd(i: usize, n: usize, reserved: usize, reservedCount: i32, record: usize): usize {
  if (i >= n || load<u8>(i) != OPEN_OBJECT) return 0;
  let depth: i32 = 0;
  // With `record`: the top-level member whose value is being read (its entry), else 0.
  let member: usize = 0;
  // At the top of the loop a value starts at `i` (whitespace already skipped); each pass
  // reads one value, then the punctuation after it up to the start of the next value.
  for (;;) {
    let c: u32 = i < n ? load<u8>(i) : 0;
    if (c == QUOTE) {
      i = skipString(i + 1, n);
      if (i == 0) return 0;
    } else if (c == OPEN_OBJECT || c == OPEN_ARRAY) {
      if (depth == MAX_DEPTH) return 0;
      const isObject = c == OPEN_OBJECT;
      store<u8>(containers + depth, isObject ? 1 : 0);
      depth++;
      i = skipSpace(i + 1, n);
      if (i < n && load<u8>(i) == (isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        depth--;
        i++;
      } else {
        if (isObject) {
          const key = i;
          i = skipKey(i, n, depth == 1 ? reserved : 0, reservedCount);
          if (i == 0) return 0;
          if (depth == 1 && record != 0) {
            member = recordMember(record, key, i);
            if (member == 0) return 0;
          }
        }
        continue;
      }
    } else if (c == MINUS || c - ZERO < 10) {
      i = skipNumber(i, n);
      if (i == 0) return 0;
    } else if (c == 0x74 /* t */) {
      if (i + 4 > n || load<u32>(i) != TRUE) return 0;
      i += 4;
    } else if (c == 0x66 /* f */) {
      if (i + 5 > n || load<u32>(i + 1) != ALSE) return 0;
      i += 5;
    } else if (c == 0x6e /* n */) {
      if (i + 4 > n || load<u32>(i) != NULL) return 0;
      i += 4;
    } else {
      return 0;
    }
    // After a value: `,` (then the next member or element), or the close of its container.
    for (;;) {
      if (depth == 0) return i;
      if (member != 0 && depth == 1) {
        store<u32>(member + 8, <u32>i);
        member = 0;
      }
      i = skipSpace(i, n);
      if (i >= n) return 0;
      c = load<u8>(i);
      const inObject = load<u8>(containers + depth - 1) == 1;
      if (c == COMMA) {
        i = skipSpace(i + 1, n);
        if (inObject) {
          const key = i;
          i = skipKey(i, n, depth == 1 ? reserved : 0, reservedCount);
          if (i == 0) return 0;
          if (depth == 1 && record != 0) {
            member = recordMember(record, key, i);
            if (member == 0) return 0;
          }
        }
        break;
      }
      if (c != (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) return 0;
      depth--;
      i++;
    }
  }
  return 0;
}

/*
 * Member tables, for `actions` applied to lines (functions/runner/actions/line-chain.ts):
 * `scanMembers` checks lines as `spliceLines` does and records where each top-level member
 * is; JavaScript evaluates the actions on the few fields they read; `emitLines` writes the
 * lines again from their members, renamed or left out, with the members the actions set
 * and the config's suffix. A line's record in the table is u32s: the address of its `{`,
 * its member count, then for each wanted name (the names the actions touch, at most 32) the
 * address of its member's entry (0 when the line has none), then for each member an entry:
 * the address of its key's opening quote, the start and end of its value and the index of
 * its name among the wanted ones (-1 when it is not one).
 */

/** The wanted-name table (u32 pairs: address, length) of the current scan. */
let wantedAt: usize = 0;
let wantedCount: i32 = 0;
/** Wanted names seen in the current line, one bit each: a second one is a duplicate key. */
let wantedSeen: u32 = 0;

/** Where the last scan's table ends. */
export function tableEnd(): usize {
  return written;
}

/**
 * Like `spliceLines` without the copy: records each line's members at `table` while each
 * line is a JSON object the scanner vouches for and names no wanted key twice (JSON.parse
 * would keep the last; the slow path does that). Returns how many lines were recorded;
 * `tableEnd()` tells where the table ends.
 */
export function scanMembers(spans: usize, count: i32, table: usize, config: usize, wanted: usize, wanteds: i32): i32 {
  wantedAt = wanted;
  wantedCount = wanteds;
  const slots = <usize>wanteds << 2;
  let t = table;
  for (let k = 0; k < count; k++) {
    const start = <usize>load<u32>(spans + (<usize>k << 3));
    const end = <usize>load<u32>(spans + (<usize>k << 3) + 4);
    const open = skipSpace(start, end);
    store<u32>(t, <u32>open);
    store<u32>(t + 4, 0);
    memory.fill(t + 8, 0, slots);
    wantedSeen = 0;
    const after = objectEnd(open, end, reservedTable(config), reservedEntries(config), t);
    if (after == 0 || skipSpace(after, end) != end) {
      written = t;
      return k;
    }
    t += 8 + slots + (<usize>load<u32>(t + 4) << 4);
  }
  written = t;
  return count;
}

/**
 * Appends a member entry to the line record at `record` for the key at `key` (its opening
 * quote) whose value starts at `value`; returns the entry (its value end is stored when the
 * value is read), or 0 when the key is a wanted name the line already had.
 */
function recordMember(record: usize, key: usize, value: usize): usize {
  const members = load<u32>(record + 4);
  const entry = record + 8 + (<usize>wantedCount << 2) + (<usize>members << 4);
  store<u32>(record + 4, members + 1);
  store<u32>(entry, <u32>key);
  store<u32>(entry + 4, <u32>value);
  let id: i32 = -1;
  // The key's text: between its quotes, without escapes (skipKey refused those).
  const keyStart = key + 1;
  let keyEnd = keyStart;
  while (load<u8>(keyEnd) != <u8>QUOTE) keyEnd++;
  const length = keyEnd - keyStart;
  for (let w = 0; w < wantedCount; w++) {
    const name = wantedAt + (<usize>w << 3);
    if (<usize>load<u32>(name + 4) == length && memory.compare(keyStart, <usize>load<u32>(name), length) == 0) {
      const bit: u32 = 1 << w;
      if (wantedSeen & bit) return 0;
      wantedSeen |= bit;
      id = w;
      store<u32>(record + 8 + (<usize>w << 2), <u32>entry);
      break;
    }
  }
  store<i32>(entry + 12, id);
  return entry;
}

/**
 * Writes the lines of the last scan's table (`count` records, as `scanMembers` wrote them)
 * to `out`. Each line has a plan of three u32 at `plans`: where its appendix is and its
 * length (the members the actions set, `"name":value` joined by commas; 0xFFFFFFFF for
 * where drops the line), and where its decisions are: per wanted name, where the key to
 * write its member under is (`"name"`) and its length (0xFFFFFFFF leaves the member out).
 * Every "where" is an offset from `base`. Members of other names are kept when
 * `keepOthers`. The config's suffix closes each line.
 */
export function emitLines(
  table: usize,
  count: i32,
  plans: usize,
  base: usize,
  out: usize,
  config: usize,
  keepOthers: bool,
): void {
  const slots = <usize>wantedCount << 2;
  let t = table;
  let o = out;
  for (let k = 0; k < count; k++) {
    const members = <usize>load<u32>(t + 4);
    const entries = t + 8 + slots;
    t = entries + (members << 4);
    const plan = plans + <usize>k * 12;
    const appendixAt = load<u32>(plan);
    if (appendixAt == 0xffffffff) continue;
    const decisions = base + <usize>load<u32>(plan + 8);
    store<u8>(o++, OPEN_OBJECT);
    let any: bool = false;
    for (let m: usize = 0; m < members; m++) {
      const entry = entries + (m << 4);
      const id = load<i32>(entry + 12);
      if (id < 0) {
        if (!keepOthers) continue;
        if (any) store<u8>(o++, COMMA);
        const from = <usize>load<u32>(entry);
        const length = <usize>load<u32>(entry + 8) - from;
        copy(o, from, length);
        o += length;
      } else {
        const decision = decisions + (<usize>id << 3);
        const keyLength = load<u32>(decision + 4);
        if (keyLength == 0xffffffff) continue;
        if (any) store<u8>(o++, COMMA);
        copy(o, base + <usize>load<u32>(decision), keyLength);
        o += keyLength;
        store<u8>(o++, COLON);
        const from = <usize>load<u32>(entry + 4);
        const length = <usize>load<u32>(entry + 8) - from;
        copy(o, from, length);
        o += length;
      }
      any = true;
    }
    const appendixLength = <usize>load<u32>(plan + 4);
    if (appendixLength) {
      if (any) store<u8>(o++, COMMA);
      memory.copy(o, base + <usize>appendixAt, appendixLength);
      o += appendixLength;
      any = true;
    }
    const from: usize = skipsComma(config) && !any ? 1 : 0;
    const length = suffixLength(config) - from;
    memory.copy(o, suffixAt(config) + from, length);
    o += length;
  }
  written = o;
}

const OPEN_OBJECT: u32 = 0x7b; // {
const CLOSE_OBJECT: u32 = 0x7d; // }
const OPEN_ARRAY: u32 = 0x5b; // [
const CLOSE_ARRAY: u32 = 0x5d; // ]
const QUOTE: u32 = 0x22; // "
const BACKSLASH: u32 = 0x5c; // \
const COLON: u32 = 0x3a; // :
const COMMA: u32 = 0x2c; // ,
const MINUS: u32 = 0x2d; // -
const PLUS: u32 = 0x2b; // +
const DOT: u32 = 0x2e; // .
const ZERO: u32 = 0x30;
// The literals' bytes read as little-endian u32 (`alse` is `false` after its `f`).
const TRUE: u32 = 0x65757274;
const ALSE: u32 = 0x65736c61;
const NULL: u32 = 0x6c6c756e;

// @ts-ignore: decorator
@inline
function isSpace(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

// @ts-ignore: decorator
@inline
function skipSpace(i: usize, n: usize): usize {
  while (i < n && isSpace(load<u8>(i))) i++;
  return i;
}

/** Whether only JSON whitespace stands between an object's `{` and its closing brace. */
function isEmptyObject(start: usize, close: usize): bool {
  let i = close;
  while (i > start) {
    const c: u32 = load<u8>(--i);
    if (c == OPEN_OBJECT) return true;
    if (!isSpace(c)) return false;
  }
  return false;
}

/** Whether the last string `skipString` skipped had an escape (a key written with escapes is never reserved-checked). */
let escaped: bool = false;

/**
 * `i` is just past the opening quote; returns the index just past the closing one, or 0.
 * Sixteen bytes at a time until one is a quote, a backslash or a control character (which
 * JSON does not allow raw in a string). Sets `escaped` when the string has an escape.
 *
 * Inlined where it is called, as are `skipKey` and `skipNumber`: a log line is some twenty
 * short strings and numbers, and a call for each was about a quarter of the scan
 * (`npm run bench:json-lines`: 227-246 ns a line before, 172-177 after, fastest rounds).
 */
// @ts-ignore: decorator
@inline
function skipString(i: usize, n: usize): usize {
  escaped = false;
  const quotes = i8x16.splat(<i8>QUOTE);
  const backslashes = i8x16.splat(<i8>BACKSLASH);
  const controls = i8x16.splat(0x20);
  while (i < n) {
    const v = v128.load(i);
    const special = v128.or(
      v128.or(i8x16.eq(v, quotes), i8x16.eq(v, backslashes)),
      i8x16.lt_u(v, controls),
    );
    const bits = i8x16.bitmask(special);
    if (bits == 0) {
      i += 16;
      continue;
    }
    i += <usize>ctz<i32>(bits);
    if (i >= n) return 0;
    const c: u32 = load<u8>(i++);
    if (c == QUOTE) return i;
    if (c != BACKSLASH) return 0;
    escaped = true;
    i = skipEscape(i, n);
    if (i == 0) return 0;
  }
  return 0;
}

/** `i` is just past a backslash; the index after the escape, or 0 when JSON has no such escape. */
function skipEscape(i: usize, n: usize): usize {
  if (i >= n) return 0;
  const e: u32 = load<u8>(i++);
  if (e == 0x75 /* u */) {
    if (i + 4 > n) return 0;
    for (let k: usize = 0; k < 4; k++) if (!isHex(load<u8>(i + k))) return 0;
    return i + 4;
  }
  const known =
    e == QUOTE ||
    e == BACKSLASH ||
    e == 0x2f /* / */ ||
    e == 0x62 /* b */ ||
    e == 0x66 /* f */ ||
    e == 0x6e /* n */ ||
    e == 0x72 /* r */ ||
    e == 0x74; /* t */
  return known ? i : 0;
}

// @ts-ignore: decorator
@inline
function isHex(c: u32): bool {
  return c - ZERO < 10 || (c | 0x20) - 0x61 < 6;
}

/**
 * A member's key and colon; the index where its value starts, or 0. A key of the top-level
 * object (`reserved` not 0) must be written without escapes and must not be reserved.
 */
// @ts-ignore: decorator
@inline
function skipKey(i: usize, n: usize, reserved: usize, reservedCount: i32): usize {
  if (i >= n || load<u8>(i) != QUOTE) return 0;
  const keyStart = i + 1;
  const after = skipString(keyStart, n);
  if (after == 0) return 0;
  if (reserved != 0) {
    if (escaped) return 0;
    const length = after - 1 - keyStart;
    for (let r = 0; r < reservedCount; r++) {
      const entry = reserved + (<usize>r << 3);
      if (<usize>load<u32>(entry + 4) == length && memory.compare(keyStart, <usize>load<u32>(entry), length) == 0)
        return 0;
    }
  }
  i = skipSpace(after, n);
  if (i >= n || load<u8>(i) != COLON) return 0;
  return skipSpace(i + 1, n);
}

/** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from `i`; the index after it, or 0. */
// @ts-ignore: decorator
@inline
function skipNumber(i: usize, n: usize): usize {
  if (load<u8>(i) == MINUS) i++;
  if (i >= n) return 0;
  let c: u32 = load<u8>(i);
  if (c == ZERO) i++;
  else if (c - ZERO - 1 < 9) i = skipDigits(i + 1, n);
  else return 0;
  if (i < n && load<u8>(i) == DOT) {
    const after = skipDigits(i + 1, n);
    if (after == i + 1) return 0;
    i = after;
  }
  if (i < n) {
    c = load<u8>(i);
    if (c == 0x65 /* e */ || c == 0x45 /* E */) {
      i++;
      if (i < n && (load<u8>(i) == PLUS || load<u8>(i) == MINUS)) i++;
      const after = skipDigits(i, n);
      if (after == i) return 0;
      i = after;
    }
  }
  return i;
}

// @ts-ignore: decorator
@inline
function skipDigits(i: usize, n: usize): usize {
  while (i < n && <u32>load<u8>(i) - ZERO < 10) i++;
  return i;
}
