/**
 * The JSON-lines fast path: an NDJSON line whose bytes are one JSON object goes on as it
 * was read, with the job's metadata fields spliced in before its closing brace, never
 * decoded or parsed; the rows of a parquet slice are written as such lines from the JSON
 * of their columns (or of the whole slice). The checking and copying run in WebAssembly
 * (assembly/json-lines.ts, which says why and what it vouches for); this module loads it
 * once and lays out its memory for each call:
 *
 *   [module data][config, reserved-name table, names, suffix][spans or columns][input][spare][output][spare]
 *
 * Everything is copied in and out per call (a chunk of lines, a slice of rows), so
 * nothing outlives a call and one instance serves every object of the process.
 *
 * @example
 *   const splicer = new JsonLineSplicer(Buffer.from(',"object":"a.json"}\n'), [Buffer.from('object')], true);
 *   const { next, output } = splicer.splice(chunk, spans, 0); // output: a view, copy it before the next call
 *   const { taken } = splicer.spliceArray(JSON.stringify(rows), rows.length);
 *   splicer.spliceColumns([Buffer.from('"id":')], ['[1,2]'], 2); // {"id":1,"object":"a.json"}\n{"id":2,…
 *   scanJsonObject(Buffer.from('{"a":1}'), 0, 7, []); // 6: the index of the closing brace
 */
import { JSON_LINES_WASM } from './json-lines.wasm.ts';

/** Returned when the bytes are not a JSON object the fast path vouches for. */
export const NOT_FAST = -1;

/**
 * Deepest nesting scanned (MAX_DEPTH in the source); deeper lines take the slow path, where
 * payload.ts and json-array.ts do not parse them either, but report them (`*-too-complex`).
 */
export const MAX_SCAN_DEPTH = 256;

/** The module's exports; `config` is the address of a config block (`configImage`). */
interface JsonLinesExports {
  memory: WebAssembly.Memory;
  heapBase(): number;
  outputEnd(): number;
  spliceLines(spans: number, count: number, out: number, config: number): number;
  spliceArray(start: number, end: number, out: number, config: number): number;
  spliceColumns(columns: number, count: number, rows: number, out: number, config: number): void;
  scanObject(start: number, end: number, config: number): number;
  scanMembers(
    spans: number,
    count: number,
    table: number,
    config: number,
    wanted: number,
    wanteds: number,
  ): number;
  tableEnd(): number;
  emitLines(
    table: number,
    count: number,
    plans: number,
    base: number,
    out: number,
    config: number,
    keepOthers: boolean,
  ): void;
}

/** SIMD loads and short copies read and write up to this many bytes past their end. */
export const OVERREAD = 32;
const PAGE = 64 * 1024;
const NOTHING = new Uint8Array(0);

let wasm: JsonLinesExports | undefined;
let heap = Buffer.alloc(0);
let words = new Uint32Array(0);

/** The module's instance (one per process). member-scan.ts uses it too. */
export function exports(): JsonLinesExports {
  wasm ??= new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(JSON_LINES_WASM, 'base64')))
    .exports as unknown as JsonLinesExports;
  return wasm;
}

/** The module's memory, at least `size` bytes of it, as bytes (a Buffer, to write text) and as u32 words. */
export function memoryOf(size: number): { heap: Buffer; words: Uint32Array } {
  const { memory } = exports();
  if (memory.buffer.byteLength < size) memory.grow(Math.ceil((size - memory.buffer.byteLength) / PAGE));
  if (heap.buffer !== memory.buffer) {
    heap = Buffer.from(memory.buffer);
    words = new Uint32Array(memory.buffer);
  }
  return { heap, words };
}

export const align8 = (n: number) => (n + 7) & ~7;

/**
 * A config block and what it points to, laid out at the start of the caller's memory: five
 * u32 (the suffix's address and length, whether `{}` drops the suffix's comma, the
 * reserved-name table's address and entry count), the table of (address, length) u32
 * pairs, the names, the suffix. Built once per object, copied in before each call.
 */
export function configImage(suffix: Uint8Array, reserved: readonly Uint8Array[], skipsComma: boolean) {
  const base = align8(exports().heapBase());
  const tableAt = base + 20;
  let at = tableAt + reserved.length * 8;
  const image = new Uint8Array(at - base + reserved.reduce((n, name) => n + name.length, 0) + suffix.length);
  const view = new DataView(image.buffer);
  reserved.forEach((name, r) => {
    view.setUint32(tableAt - base + r * 8, at, true);
    view.setUint32(tableAt - base + r * 8 + 4, name.length, true);
    image.set(name, at - base);
    at += name.length;
  });
  image.set(suffix, at - base);
  const header = [at, suffix.length, skipsComma ? 1 : 0, tableAt, reserved.length];
  for (let i = 0; i < header.length; i++) view.setUint32(i * 4, header[i]!, true);
  return { config: base, image, end: align8(base + image.length), suffixLength: suffix.length };
}

/** Splices the lines of one object: `suffix` is `,"field":value…}\n`, `reserved` the field names. */
export class JsonLineSplicer {
  readonly #layout: ReturnType<typeof configImage>;

  /** `skipsComma`: the suffix starts with a comma that `{}` must not get. */
  constructor(suffix: Uint8Array, reserved: readonly Uint8Array[], skipsComma: boolean) {
    this.#layout = configImage(suffix, reserved, skipsComma);
  }

  /**
   * Takes the lines `bytes[spans[2k] .. spans[2k+1])` from span index `from` on (valid
   * UTF-8), while each is a JSON object the fast path vouches for. `next` is the span index
   * of the first line not taken (`spans.length` when all were); `output` holds the taken
   * lines, spliced, and is a view of the module's memory: valid until the next call.
   */
  splice(bytes: Uint8Array, spans: readonly number[], from: number): { next: number; output: Uint8Array } {
    const count = (spans.length - from) >> 1;
    if (count <= 0) return { next: from, output: NOTHING };
    const first = spans[from]!;
    const inputLength = spans[spans.length - 1]! - first;
    const { config, image, end, suffixLength } = this.#layout;
    const spansAt = end;
    const inputAt = spansAt + count * 8;
    const outAt = align8(inputAt + inputLength + OVERREAD);
    const { heap, words } = memoryOf(outAt + inputLength + count * suffixLength);
    heap.set(image, config);
    let w = spansAt >> 2;
    const shift = inputAt - first;
    for (let i = from; i < spans.length; i++) words[w++] = spans[i]! + shift;
    heap.set(bytes.subarray(first, first + inputLength), inputAt);
    const { spliceLines, outputEnd } = exports();
    const taken = spliceLines(spansAt, count, outAt, config);
    return { next: from + taken * 2, output: heap.subarray(outAt, outputEnd()) };
  }

  /**
   * The objects of `arrayJson` (a JSON array of `elements` values, as `JSON.stringify`
   * writes it) as lines, spliced, up to the first element that is not an object the fast
   * path vouches for. `taken` is how many were; `output` is a view of the module's memory,
   * valid until the next call.
   */
  spliceArray(arrayJson: string, elements: number): { taken: number; output: Uint8Array } {
    const { config, image, end: inputAt, suffixLength } = this.#layout;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the output adds a suffix per element.
    const outAt = align8(inputAt + arrayJson.length * 3 + OVERREAD);
    const { heap } = memoryOf(outAt + arrayJson.length * 3 + elements * suffixLength);
    heap.set(image, config);
    const inputLength = heap.write(arrayJson, inputAt);
    const taken = exports().spliceArray(inputAt, inputAt + inputLength, outAt, config);
    return { taken, output: heap.subarray(outAt, exports().outputEnd()) };
  }

  /**
   * `rows` lines from columns: `keys[c]` is the UTF-8 of `"name":` and `texts[c]` the JSON
   * array of the column's values, as `JSON.stringify` writes it (`rows` values each). The
   * output is a view of the module's memory, valid until the next call.
   */
  spliceColumns(keys: readonly Uint8Array[], texts: readonly string[], rows: number): Uint8Array {
    const { config, image, end, suffixLength } = this.#layout;
    const tableAt = end;
    // Room for each key and its column's text (at most 3 UTF-8 bytes per UTF-16 unit); a
    // line holds `{`, a comma, key and value per column, and the suffix.
    let keyBytes = 0;
    let textBytes = 0;
    for (let c = 0; c < keys.length; c++) {
      keyBytes += keys[c]!.length;
      textBytes += texts[c]!.length * 3;
    }
    const outAt = align8(tableAt + keys.length * 16 + keyBytes + textBytes + OVERREAD);
    const lineBytes = 1 + keys.length + keyBytes + suffixLength;
    const { heap, words } = memoryOf(outAt + textBytes + rows * lineBytes + OVERREAD);
    heap.set(image, config);
    let at = tableAt + keys.length * 16;
    for (let c = 0; c < keys.length; c++) {
      const key = keys[c]!;
      heap.set(key, at);
      const textAt = at + key.length;
      const textEnd = textAt + heap.write(texts[c]!, textAt);
      const w = (tableAt >> 2) + c * 4;
      words[w] = at;
      words[w + 1] = key.length;
      words[w + 2] = textAt;
      words[w + 3] = textEnd;
      at = textEnd;
    }
    const { spliceColumns, outputEnd } = exports();
    spliceColumns(tableAt, keys.length, rows, outAt, config);
    return heap.subarray(outAt, outputEnd());
  }
}

/**
 * The index of the closing `}` when `bytes[start..end)` (valid UTF-8) is exactly one JSON
 * object, surrounding JSON whitespace allowed, none of whose top-level keys is in
 * `reserved`; NOT_FAST otherwise. One line at a time: `JsonLineSplicer` takes many.
 */
export function scanJsonObject(
  bytes: Uint8Array,
  start: number,
  end: number,
  reserved: readonly Uint8Array[],
): number {
  const { config, image, end: inputAt } = configImage(NOTHING, reserved, false);
  const { heap } = memoryOf(inputAt + (end - start) + OVERREAD);
  heap.set(image, config);
  heap.set(bytes.subarray(start, end), inputAt);
  const after = exports().scanObject(inputAt, inputAt + end - start, config);
  return after === 0 ? NOT_FAST : start + after - 1 - inputAt;
}
