/**
 * Events as the text an output sends or stores, collected into batches that respect
 * `max-bytes` and `max-events` exactly: a batch is cut before the event that would pass a
 * limit, whatever the sizes of the deliveries were. So the same events always cut into
 * the same batches, which is what lets the `gcs` output name its parts after their
 * source and overwrite them on a re-run. JSON lines (`writeJsonLines`) stay bytes: a
 * delivery that fits is taken whole, only one that crosses a limit is split on `\n`.
 *
 * @example
 *   const batches = new BatchCutter({ maxBytes: 1 << 20, maxEvents: 1000 }, 'ndjson');
 *   for (const full of batches.addEvents(events)) await send(full.body());
 */
import type { JsonLines, RunEvent } from '../types.ts';

export type TextFormat = 'ndjson' | 'json-array' | 'raw';

export interface BatchLimits {
  maxBytes: number;
  maxEvents: number;
}

const NEWLINE = 0x0a;

export class TextBatch {
  readonly pieces: (string | Buffer)[] = [];
  bytes = 0;
  events = 0;
  readonly openedAt = Date.now();
  /** The first event, for outputs that name a batch after it (time tokens); set by the caller. */
  first?: RunEvent;

  constructor(readonly format: TextFormat) {}

  /** The batch as the destination gets it: NDJSON / raw lines, or one JSON array. */
  body(): Buffer {
    const text = Buffer.concat(
      this.pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)),
      this.bytes,
    );
    if (this.format !== 'json-array') return text;
    // In NDJSON a newline byte only ever separates lines (JSON escapes it in strings),
    // so turning separators into commas makes the elements of an array.
    for (
      let at = text.indexOf(NEWLINE);
      at !== -1 && at < text.length - 1;
      at = text.indexOf(NEWLINE, at + 1)
    )
      text[at] = 0x2c;
    return Buffer.concat([Buffer.from('['), text.subarray(0, text.length - 1), Buffer.from(']')]);
  }
}

/** One event as a line of the format. */
export function lineOf(event: RunEvent, format: TextFormat): string {
  if (format === 'raw' && typeof event._raw === 'string') return `${event._raw}\n`;
  return `${JSON.stringify(event)}\n`;
}

export class BatchCutter {
  private open: TextBatch | undefined;

  constructor(
    private readonly limits: BatchLimits,
    private readonly format: TextFormat,
  ) {}

  get current(): TextBatch | undefined {
    return this.open;
  }

  /** Adds events; returns the batches they filled (in order), which the caller sends. */
  addEvents(events: RunEvent[]): TextBatch[] {
    const full: TextBatch[] = [];
    for (const event of events) {
      const line = lineOf(event, this.format);
      const cut = this.room(Buffer.byteLength(line), 1);
      if (cut) full.push(cut);
      const batch = this.batch();
      batch.first ??= event;
      batch.pieces.push(line);
      batch.bytes += Buffer.byteLength(line);
      batch.events++;
    }
    return full;
  }

  /** Adds JSON lines; returns the batches they filled. */
  addLines(lines: JsonLines): TextBatch[] {
    let bytes = 0;
    for (const chunk of lines.chunks) bytes += chunk.length;
    const open = this.open;
    const fits =
      (open?.bytes ?? 0) + bytes <= this.limits.maxBytes &&
      (open?.events ?? 0) + lines.count <= this.limits.maxEvents;
    if (fits) {
      const batch = this.batch();
      batch.pieces.push(...lines.chunks);
      batch.bytes += bytes;
      batch.events += lines.count;
      return [];
    }
    const full: TextBatch[] = [];
    for (const chunk of lines.chunks) {
      let start = 0;
      while (start < chunk.length) {
        const end = chunk.indexOf(NEWLINE, start) + 1 || chunk.length;
        const line = chunk.subarray(start, end);
        const cut = this.room(line.length, 1);
        if (cut) full.push(cut);
        const batch = this.batch();
        batch.pieces.push(line);
        batch.bytes += line.length;
        batch.events++;
        start = end;
      }
    }
    return full;
  }

  /** The open batch, taken (to send it before it is full: max-age, the end of a unit, a flush). */
  take(): TextBatch | undefined {
    const open = this.open;
    this.open = undefined;
    return open?.events ? open : undefined;
  }

  /** Cuts the open batch when `bytes` more in `events` more events would pass a limit. */
  private room(bytes: number, events: number): TextBatch | undefined {
    const open = this.open;
    if (!open || open.events === 0) return undefined;
    if (open.bytes + bytes <= this.limits.maxBytes && open.events + events <= this.limits.maxEvents)
      return undefined;
    this.open = undefined;
    return open;
  }

  private batch(): TextBatch {
    this.open ??= new TextBatch(this.format);
    return this.open;
  }
}
