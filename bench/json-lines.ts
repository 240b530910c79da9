/**
 * `npm run bench:json-lines`: the JSON-lines fast path alone (json-splicer.ts and its
 * WebAssembly, assembly/json-lines.ts), on one core: nanoseconds per line to check and copy
 * the bench's log lines (bench/gcs-data.ts, about 190 bytes each), handed over 1 MiB at a
 * time as a read thread hands them. For tuning the WebAssembly: `sluice job run` spends
 * about a third of a read thread's time here (bench:gcs:cores has the whole run).
 *
 * CPU time of the process (`process.cpuUsage`), not wall time: on a shared VM the wall
 * clock also counts the time other guests took. The median and the fastest of BENCH_ROUNDS
 * rounds (default 25) are reported; the first round, where V8 compiles, is reported apart.
 *
 * @example
 *   npm run bench:json-lines
 */
import { JsonLineSplicer } from '../functions/runner/inputs/gcs/json-splicer.ts';
import { ndjsonLine } from './gcs-data.ts';

const LINES = 250_000;
const PIECE = 1024 * 1024;
const rounds = Number(process.env.BENCH_ROUNDS ?? 25);

const text = Buffer.from(Array.from({ length: LINES }, (_, i) => ndjsonLine(i)).join(''));
// The pieces a read thread hands to the splicer: whole lines, about PIECE bytes each.
const pieces: { bytes: Buffer; spans: number[] }[] = [];
for (let at = 0; at < text.length; ) {
  const end = Math.min(
    text.length,
    text.indexOf(10, Math.min(at + PIECE, text.length - 1)) + 1 || text.length,
  );
  const bytes = text.subarray(at, end);
  const spans: number[] = [];
  for (let start = 0; start < bytes.length; ) {
    const nl = bytes.indexOf(10, start);
    spans.push(start, nl);
    start = nl + 1;
  }
  pieces.push({ bytes, spans });
  at = end;
}

// No metadata fields: the line is copied as it is (as `sluice job run` without `*-field`s).
const splicer = new JsonLineSplicer(Buffer.from('}\n'), [], false);
const perLine: number[] = [];
for (let round = 0; round < rounds; round++) {
  const before = process.cpuUsage();
  let copied = 0;
  for (const { bytes, spans } of pieces) {
    const { next, output } = splicer.splice(bytes, spans, 0);
    if (next !== spans.length) throw new Error('the fast path refused a bench line');
    copied += output.length;
  }
  const used = process.cpuUsage(before);
  if (copied !== text.length) throw new Error(`copied ${copied} bytes of ${text.length}`);
  perLine.push(((used.user + used.system) * 1000) / LINES);
}

const first = perLine[0]!;
const sorted = perLine.slice(1).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)]!;
const mbPerSecond = (ns: number) => (text.length / LINES / ns) * 1000;
console.log(
  `${LINES.toLocaleString('en-US')} lines of ${(text.length / LINES).toFixed(0)} bytes, ${pieces.length} pieces of 1 MiB, ${rounds} rounds`,
);
console.log(`first round ${first.toFixed(0)} ns/line`);
console.log(`median      ${median.toFixed(0)} ns/line (${mbPerSecond(median).toFixed(0)} MB/s)`);
console.log(`fastest     ${sorted[0]!.toFixed(0)} ns/line (${mbPerSecond(sorted[0]!).toFixed(0)} MB/s)`);
