/**
 * A thread of the minimal reader (main.ts): inflates each object it is sent in one call,
 * checks and copies its lines with the same WebAssembly as the `gcs` input
 * (JsonLineSplicer), and sends the lines back. Nothing else: no batching, no metadata,
 * no slow path (a line the fast path refuses is an error here).
 */
import { parentPort } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { JsonLineSplicer } from '../../functions/runner/inputs/gcs/json-splicer.ts';

const splicer = new JsonLineSplicer(Buffer.from('}\n'), [], true);
const port = parentPort!;

port.on('message', ({ id, gz }: { id: number; gz: Uint8Array }) => {
  const raw = gunzipSync(gz);
  const parts: Buffer[] = [];
  const spans: number[] = [];
  let total = 0;
  const flush = () => {
    if (!spans.length) return;
    const { next, output } = splicer.splice(raw, spans, 0);
    if (next !== spans.length) throw new Error('a line the fast path does not take');
    parts.push(Buffer.from(output));
    total += output.length;
    spans.length = 0;
  };
  for (let pos = 0; pos < raw.length; ) {
    let nl = raw.indexOf(10, pos);
    if (nl === -1) nl = raw.length;
    if (nl > pos) spans.push(pos, nl);
    pos = nl + 1;
    if (spans.length >= 8192) flush();
  }
  flush();
  const out = Buffer.concat(parts, total);
  port.postMessage({ id, out }, [out.buffer as ArrayBuffer]);
});
