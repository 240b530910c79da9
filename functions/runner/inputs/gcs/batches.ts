/**
 * The two forms a run hands its events on in: event objects (`deliver`), or JSON lines
 * (`deliverJsonLines`, when the output writes JSON text). A batcher shapes one object's
 * events into the chosen form; the delivery tracker joins batches up to the batch size.
 * As JSON lines, an NDJSON line that is one JSON object stays bytes from download to
 * output: checked and copied, its metadata fields spliced in before the closing brace, a
 * chunk of lines at a time (`JsonLineSplicer`, WebAssembly). Any other event is serialized
 * with `JSON.stringify`. A job's actions apply to either form: to JSON lines as bytes when
 * the chain allows (actions/line-chain.ts with member-scan.ts), else to each event parsed.
 *
 * @example
 *   const batcher = jsonLines.batcher(plan, meta);
 *   const stop = batcher.lines(bytes, spans, 0); // spans[stop], spans[stop + 1]: parse that line
 *   if (stop < spans.length) batcher.value(JSON.parse(bytes.toString('utf8', spans[stop], spans[stop + 1])));
 *   deliverJsonLines(batcher.take()!);
 */
import type { ActionChain } from '../../actions/chain.ts';
import type { JsonLines, RunEvent } from '../../types.ts';
import type { RowSlice } from './arrow-rows.ts';
import { eventShape, metadataEntries, type ShapePlan } from './fields.ts';
import { JsonLineSplicer } from './json-splicer.ts';
import type { ObjectMeta } from './list.ts';
import { MemberLines } from './member-scan.ts';

/** Collects one object's events, shaped, as batches of `B`. */
export interface EventBatcher<B> {
  /**
   * Whole lines' bytes (valid UTF-8), `bytes[spans[2k] .. spans[2k+1])` from span index
   * `from` on, taken as they are while this form can (JSON objects handed on as JSON
   * lines). Returns the span index of the first line not taken (`spans.length` when all
   * were), which the caller must decode and parse.
   */
  lines(bytes: Buffer, spans: readonly number[], from: number): number;
  /** A parsed JSON value (objects merge unless `data-field` is set). */
  value(value: unknown): void;
  /** The rows of a parquet slice, in order: as many `value` calls, maybe cheaper. */
  rows(slice: RowSlice): void;
  /** Text or base64 that is not parsed. */
  text(text: string): void;
  /** An event made whole elsewhere (the listing event of `list-objects`). */
  event(event: RunEvent): void;
  /** The events added since the last `take`; undefined when there are none. */
  take(): B | undefined;
}

export interface BatchFormat<B> {
  batcher(plan: ShapePlan, meta: ObjectMeta): EventBatcher<B>;
  /** Events in a batch. */
  size(batch: B): number;
  /** Bytes a batch holds, where that is cheap to know (0 where it is not). */
  bytes(batch: B): number;
  /** One batch of several, in order. */
  join(batches: B[]): B;
}

export const eventObjects: BatchFormat<RunEvent[]> = {
  batcher(plan, meta) {
    const shape = eventShape(plan, meta);
    let events: RunEvent[] = [];
    return {
      lines: (_bytes, _spans, from) => from,
      value: (value) => events.push(shape.fromValue(value)),
      rows(slice) {
        const rows = slice.rows();
        for (let i = 0; i < rows.length; i++) events.push(shape.fromValue(rows[i]));
      },
      text: (text) => events.push(shape.fromText(text)),
      event: (event) => events.push(event),
      take() {
        if (!events.length) return undefined;
        const batch = events;
        events = [];
        return batch;
      },
    };
  },
  size: (batch) => batch.length,
  // Measuring event objects would mean serializing them; their count bounds them instead.
  bytes: () => 0,
  join: (batches) => (batches.length === 1 ? batches[0]! : batches.flat()),
};

/** First room of a batch's buffer: about one decompressed chunk of NDJSON with its metadata. */
const INITIAL_BATCH_BYTES = 128 * 1024;

export const jsonLines: BatchFormat<JsonLines> = jsonLinesWithActions(undefined);

/** Where a batcher's buffers come from: a read thread's reuses those the output released. */
export type Allocate = (bytes: number) => Buffer;

/** JSON lines of the events `chain` gives (without one: as read). */
export function jsonLinesWithActions(
  chain: ActionChain | undefined,
  allocate: Allocate = Buffer.allocUnsafe,
): BatchFormat<JsonLines> {
  return {
    batcher: (plan, meta) => jsonLinesBatcher(plan, meta, chain, allocate),
    size: (batch) => batch.count,
    bytes(batch) {
      let bytes = 0;
      for (const chunk of batch.chunks) bytes += chunk.length;
      return bytes;
    },
    join(batches) {
      if (batches.length === 1) return batches[0]!;
      let count = 0;
      const releases: (() => void)[] = [];
      for (const batch of batches) {
        count += batch.count;
        if (batch.release) releases.push(batch.release);
      }
      const chunks = batches.flatMap((batch) => batch.chunks);
      if (releases.length === 0) return { chunks, count };
      return {
        chunks,
        count,
        release: () => {
          for (const release of releases) release();
        },
      };
    },
  };
}

function jsonLinesBatcher(
  plan: ShapePlan,
  meta: ObjectMeta,
  chain: ActionChain | undefined,
  allocate: Allocate,
): EventBatcher<JsonLines> {
  const shape = eventShape(plan, meta);
  const entries = metadataEntries(plan.fields, meta);
  // `,"object":"logs/a.json"}\n`: what the metadata adds to an object's line, and the
  // names a line's own keys must not have for it to be spliced (they would appear twice).
  const suffix = Buffer.from(
    `${entries.map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v ?? null)}`).join('')}}\n`,
  );
  const names = entries.map(([name]) => name);
  const reserved = names.map((name) => Buffer.from(name));
  // With `data-field` a line's object is nested, never spliced.
  const splices = !plan.dataField;
  let made: JsonLineSplicer | undefined;
  const splicer = () => {
    made ??= new JsonLineSplicer(suffix, reserved, entries.length > 0);
    return made;
  };
  // Actions apply to lines as bytes unless they touch the metadata fields (which the
  // suffix adds after them) or `keep` would drop those.
  const lineChain = chain?.lines;
  const linesTakeActions =
    splices &&
    lineChain !== undefined &&
    !names.some((name) => lineChain.wanted.includes(name)) &&
    (lineChain.keepOthers || names.length === 0);
  let members: MemberLines | undefined;
  let out = allocate(INITIAL_BATCH_BYTES);
  let length = 0;
  let count = 0;
  const room = (bytes: number) => {
    if (length + bytes <= out.length) return;
    const grown = allocate(Math.max(out.length * 2, length + bytes));
    out.copy(grown, 0, 0, length);
    out = grown;
  };
  /** Lines the splicer made. */
  const take = (lines: Uint8Array, events: number) => {
    room(lines.length);
    out.set(lines, length);
    length += lines.length;
    count += events;
  };
  const add = (made: RunEvent) => {
    const event = chain ? chain.apply(made) : made;
    if (event === undefined) return;
    const json = JSON.stringify(event);
    room(json.length * 3 + 1);
    length += out.write(json, length);
    out[length++] = 0x0a;
    count++;
  };
  return {
    lines(bytes, spans, from) {
      if (!splices) return from;
      if (chain) {
        if (!linesTakeActions) return from;
        members ??= new MemberLines(suffix, reserved, entries.length > 0, lineChain.wanted);
        const scan = members.scan(bytes, spans, from);
        const edits = lineChain.apply(scan);
        take(
          scan.emit(
            edits.plans,
            edits.extra,
            edits.extraLength,
            lineChain.keepOthers,
            lineChain.maxKeyLength,
          ),
          edits.kept,
        );
        return scan.next;
      }
      const { next, output } = splicer().splice(bytes, spans, from);
      take(output, (next - from) >> 1);
      return next;
    },
    value: (value) => add(shape.fromValue(value)),
    rows(slice) {
      let from = 0;
      if (splices && !chain) {
        // Written from the JSON of each column when the rows would serialize as their
        // columns do: no row objects, and one JSON.stringify per column (about half the
        // time of one over the rows, `npm run bench:gcs:parquet`).
        const columns = columnsJson(slice, names);
        if (columns) {
          take(splicer().spliceColumns(columns.keys, columns.texts, slice.count), slice.count);
          return;
        }
        const spliced = splicer().spliceArray(JSON.stringify(slice.rows()), slice.count);
        take(spliced.output, spliced.taken);
        from = spliced.taken;
      }
      const rows = slice.rows();
      for (let i = from; i < rows.length; i++) add(shape.fromValue(rows[i]));
    },
    text: (text) => add(shape.fromText(text)),
    event: add,
    take() {
      if (!count) return undefined;
      const batch = { chunks: [out.subarray(0, length)], count };
      out = allocate(Math.max(INITIAL_BATCH_BYTES, length));
      length = 0;
      count = 0;
      return batch;
    },
  };
}

/**
 * The keys (`"name":`, UTF-8) and the JSON arrays of the columns of `slice`, in the order
 * `JSON.stringify` writes a row's keys (V8 puts integer-like names first); undefined when
 * its rows would not serialize as their columns do: a repeated name or `__proto__`, a name
 * among `reserved` (the metadata must replace it), a value `undefined` (a row leaves its
 * key out, an array writes `null`), or a column that is not an array of JSON values.
 */
export function columnsJson(
  slice: RowSlice,
  reserved: readonly string[],
): { keys: Uint8Array[]; texts: string[] } | undefined {
  const { names, columns } = slice;
  if (!names.length || new Set(names).size !== names.length) return undefined;
  const index = new Map<string, number>();
  const probe: Record<string, number> = {};
  for (let c = 0; c < names.length; c++) {
    const name = names[c]!;
    if (name === '__proto__' || reserved.includes(name)) return undefined;
    index.set(name, c);
    probe[name] = c;
  }
  const keys: Uint8Array[] = [];
  const texts: string[] = [];
  for (const name of Object.keys(probe)) {
    const column = columns[index.get(name)!]!;
    let text: string;
    if (Array.isArray(column)) {
      if (column.includes(undefined)) return undefined;
      text = JSON.stringify(column);
    } else if (
      ArrayBuffer.isView(column) &&
      !(column instanceof BigInt64Array || column instanceof BigUint64Array)
    ) {
      text = JSON.stringify(Array.from(column as ArrayLike<number>));
    } else return undefined;
    keys.push(Buffer.from(`${JSON.stringify(name)}:`));
    texts.push(text);
  }
  return { keys, texts };
}
