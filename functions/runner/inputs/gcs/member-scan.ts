/**
 * The members of NDJSON lines, for `actions` applied to lines as bytes
 * (functions/runner/actions/line-chain.ts): a scan (WebAssembly, `scanMembers` in
 * assembly/json-lines.ts) checks a chunk's lines as the splice does and records where each
 * top-level member is; the actions read the few fields they need from it (`value`), decide
 * each line's fate, and `emit` writes the kept lines again from their members (some left
 * out or renamed) plus the members the actions set, with the object's metadata suffix.
 * No line is parsed whole, and no event object is built.
 *
 * Memory of one scan, after the config image:
 *
 *   [wanted-name table, names][spans][input][spare][member table][plans][extra][spare][output][spare]
 *
 * @example
 *   const lines = new MemberLines(suffix, reserved, true, ['status', 'message']);
 *   const scan = lines.scan(chunk, spans, 0);
 *   while (scan.advance()) scan.value(0); // the line's `status`, or ABSENT
 *   const output = scan.emit(plans, extra, extraLength, true, 16); // a view: copy it before the next scan
 */
import { align8, configImage, exports, memoryOf, OVERREAD } from './json-splicer.ts';

/** What `value` gives for a name the line does not have. */
export const ABSENT: unique symbol = Symbol('absent');

/** Most wanted names (the scan keeps one bit per name to find repeated keys). */
export const MAX_WANTED = 32;

/** Drops a line, in the first word of its plan. */
export const DROP_LINE = 0xffffffff;
/** Leaves a member out, as the key length of its decision. */
export const LEAVE_OUT = 0xffffffff;

const NOTHING = new Uint8Array(0);

/** Buffer's own slicers, without toString's argument checks (the scan vouches for the range). */
interface FastSlices {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
}

/** The JSON number `bytes[start..end)`: small integers digit by digit, others as JavaScript reads them. */
function numberAt(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  const negative = bytes[i] === 0x2d;
  if (negative) i++;
  // Up to 15 digits stay exact in a double.
  if (end - i <= 15) {
    let n = 0;
    for (; i < end; i++) {
      const digit = bytes[i]! - 0x30;
      if (digit < 0 || digit > 9) break;
      n = n * 10 + digit;
    }
    if (i === end) return negative ? -n : n;
  }
  // A JSON number is a JavaScript numeric literal with the same value.
  return Number((bytes as unknown as FastSlices).latin1Slice(start, end));
}

/** Lines of one object's chunks, scanned for the members of `wanted` names. */
export class MemberLines {
  readonly #layout: ReturnType<typeof configImage>;
  /** The wanted-name table image, laid out after the config. */
  readonly #wanted: Uint8Array;
  readonly #wantedCount: number;

  /** `suffix`, `reserved` and `skipsComma` as for JsonLineSplicer; `wanted` at most MAX_WANTED names. */
  constructor(
    suffix: Uint8Array,
    reserved: readonly Uint8Array[],
    skipsComma: boolean,
    wanted: readonly string[],
  ) {
    if (wanted.length > MAX_WANTED) throw new Error(`at most ${MAX_WANTED} wanted names`);
    this.#layout = configImage(suffix, reserved, skipsComma);
    const names = wanted.map((name) => Buffer.from(name));
    const tableBytes = names.length * 8;
    this.#wanted = new Uint8Array(align8(tableBytes + names.reduce((n, name) => n + name.length, 0)));
    const view = new DataView(this.#wanted.buffer);
    let at = tableBytes;
    names.forEach((name, w) => {
      // Addresses are relative here; `scan` adds where the image lands.
      view.setUint32(w * 8, at, true);
      view.setUint32(w * 8 + 4, name.length, true);
      this.#wanted.set(name, at);
      at += name.length;
    });
    this.#wantedCount = names.length;
  }

  /**
   * Scans the lines `bytes[spans[2k] .. spans[2k+1])` from span index `from` on (valid
   * UTF-8) while each is a JSON object the fast path vouches for and repeats no wanted key.
   */
  scan(bytes: Uint8Array, spans: readonly number[], from: number): MemberScan {
    const count = (spans.length - from) >> 1;
    const { config, image, end, suffixLength } = this.#layout;
    if (count <= 0) return new MemberScan(0, from, 0, 0, 0, 0, config, suffixLength);
    const first = spans[from]!;
    const inputLength = spans[spans.length - 1]! - first;
    const wantedAt = end;
    const spansAt = align8(wantedAt + this.#wanted.length);
    const inputAt = spansAt + count * 8;
    const tableAt = align8(inputAt + inputLength + OVERREAD);
    // A line's record: two words, a word per wanted name, four per member; a member takes
    // at least four bytes of its line (`"":0`).
    const tableBytes = count * (8 + this.#wantedCount * 4) + (inputLength >> 2) * 16 + 16;
    const { heap, words } = memoryOf(tableAt + tableBytes);
    heap.set(image, config);
    heap.set(this.#wanted, wantedAt);
    for (let w = 0; w < this.#wantedCount; w++) words[(wantedAt >> 2) + w * 2]! += wantedAt;
    let s = spansAt >> 2;
    const shift = inputAt - first;
    for (let i = from; i < spans.length; i++) words[s++] = spans[i]! + shift;
    heap.set(bytes.subarray(first, first + inputLength), inputAt);
    const { scanMembers, tableEnd } = exports();
    const lines = scanMembers(spansAt, count, tableAt, config, wantedAt, this.#wantedCount);
    return new MemberScan(
      lines,
      from + lines * 2,
      this.#wantedCount,
      tableAt,
      tableEnd(),
      inputLength,
      config,
      suffixLength,
    );
  }
}

/** The recorded lines of one scan, read one at a time. Valid until the next scan. */
export class MemberScan {
  /** The line `advance` moved to: its record's address. */
  #record = -1;
  #nextRecord: number;
  // The module's memory does not grow between a scan and its emit.
  readonly #heap: Buffer;
  readonly #words: Uint32Array;

  constructor(
    /** Lines recorded. */
    readonly lines: number,
    /** The span index of the first line not recorded (it must take the slow path). */
    readonly next: number,
    private readonly wantedCount: number,
    private readonly tableAt: number,
    private readonly tableEnd: number,
    private readonly inputLength: number,
    private readonly config: number,
    private readonly suffixLength: number,
  ) {
    this.#nextRecord = tableAt;
    ({ heap: this.#heap, words: this.#words } = memoryOf(0));
  }

  /** Moves to the next recorded line; false after the last. */
  advance(): boolean {
    if (this.#nextRecord >= this.tableEnd) return false;
    this.#record = this.#nextRecord;
    this.#nextRecord += 8 + this.wantedCount * 4 + this.#words[(this.#record >> 2) + 1]! * 16;
    return true;
  }

  /** Whether the current line has a member of wanted name `w`. */
  has(w: number): boolean {
    return this.#words[(this.#record >> 2) + 2 + w] !== 0;
  }

  /** The scanned bytes, which `stringStart` and `valueEnd` index (valid until the next scan). */
  get bytes(): Uint8Array {
    return this.#heap;
  }

  /** Where the current line's value of wanted name `w` starts (its opening quote) when it is a string; -1 otherwise. */
  stringStart(w: number): number {
    const entry = this.#words[(this.#record >> 2) + 2 + w]!;
    if (entry === 0) return -1;
    const start = this.#words[(entry >> 2) + 1]!;
    return this.#heap[start] === 0x22 ? start : -1;
  }

  /** Just past the current line's value of wanted name `w` (which it has). */
  valueEnd(w: number): number {
    const entry = this.#words[(this.#record >> 2) + 2 + w]!;
    return this.#words[(entry >> 2) + 2]!;
  }

  /** The current line's value of wanted name `w` (decoded as JSON.parse would), or ABSENT. */
  value(w: number): unknown {
    const heap = this.#heap;
    const words = this.#words;
    const entry = words[(this.#record >> 2) + 2 + w]!;
    if (entry === 0) return ABSENT;
    const start = words[(entry >> 2) + 1]!;
    const end = words[(entry >> 2) + 2]!;
    switch (heap[start]) {
      case 0x22: {
        // The scanner checked the string; without escapes its bytes are its text.
        const text = (heap as unknown as FastSlices).utf8Slice(start + 1, end - 1);
        return text.includes('\\') ? JSON.parse(heap.toString('utf8', start, end)) : text;
      }
      case 0x74:
        return true;
      case 0x66:
        return false;
      case 0x6e:
        return null;
      case 0x7b:
      case 0x5b:
        return JSON.parse(heap.toString('utf8', start, end));
      default:
        return numberAt(heap, start, end);
    }
  }

  /**
   * Writes the recorded lines as `plans` (three words per line, see `emitLines`) and
   * `extra` (appendices, decisions and keys, which the plans point into as offsets) say.
   * `maxKeyLength`: the longest key a decision writes. Returns a view of the module's
   * memory, valid until the next scan.
   */
  emit(
    plans: Uint32Array,
    extra: Uint8Array,
    extraLength: number,
    keepOthers: boolean,
    maxKeyLength: number,
  ): Uint8Array {
    if (!this.lines) return NOTHING;
    const plansAt = align8(this.tableEnd);
    const extraAt = align8(plansAt + this.lines * 12);
    const outAt = align8(extraAt + extraLength + OVERREAD);
    const members = (this.tableEnd - this.tableAt - this.lines * (8 + this.wantedCount * 4)) / 16;
    // Each member may gain a key and a comma; each line its braces, appendix comma and suffix.
    const outBytes =
      this.inputLength + members * (maxKeyLength + 2) + this.lines * (this.suffixLength + 2) + extraLength;
    const { heap, words } = memoryOf(outAt + outBytes + OVERREAD);
    words.set(plans.subarray(0, this.lines * 3), plansAt >> 2);
    heap.set(extra.subarray(0, extraLength), extraAt);
    const { emitLines, outputEnd } = exports();
    emitLines(this.tableAt, this.lines, plansAt, extraAt, outAt, this.config, keepOthers);
    return heap.subarray(outAt, outputEnd());
  }
}
