/**
 * `npm run bench:actions:lines`: the line path of `actions` alone, in this process, without
 * I/O: 200k NDJSON lines (bench:actions' shape) through the gcs input's JSON-lines batcher,
 * without actions and with bench:actions' chain (filter + set of two fields + remove +
 * rename, functions/runner/actions/line-chain.ts). Prints µs per line for each, the median
 * of BENCH_RUNS (default 7) alternating passes after one untimed pass. It says where a
 * change to the chain moves its cost, with less noise than whole processes.
 *
 * @example
 *   npm run bench:actions:lines
 */
import { compileActionChain } from '../functions/runner/actions/chain.ts';
import { jsonLines, jsonLinesWithActions } from '../functions/runner/inputs/gcs/batches.ts';
import type { ShapePlan } from '../functions/runner/inputs/gcs/fields.ts';
import type { ObjectMeta } from '../functions/runner/inputs/gcs/list.ts';
import type { Action } from '../shared/job/actions/schema.ts';
import { validateJob } from '../shared/job/validate.ts';
import { median } from './child-run.ts';
import { ndjsonLine } from './gcs-data.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const LINES = 200_000;
/** The chunk size the gcs input's inflate hands on. */
const CHUNK_BYTES = 256 * 1024;

const META = { bucket: 'bench', name: 'ndjson/part-00.json.gz', generation: '1', size: 0 } as ObjectMeta;
const PLAN = { fields: {} } as ShapePlan;
/** bench:actions' chain, validated as a job's. */
const ACTIONS = ((): Action[] => {
  const job = validateJob(
    {
      name: 'bench',
      input: {
        gcs: { 'bucket-name': 'bench', credentials: { 'storage-url': 'gs://bench' }, 'object-names': [] },
      },
      actions: [
        { filter: 'event.status >= 201' },
        { set: { latency_s: 'event.latency_ms / 1000.0', route: 'event.service + ":" + event.path' } },
        { remove: ['message'] },
        { rename: { request_id: 'id' } },
      ],
      output: { discard: {} },
    },
    { level: 'rendered' },
  );
  if (!job.ok) throw new Error(JSON.stringify(job.errors));
  return job.job.actions!;
})();

/** The lines in chunks cut at line ends, with each chunk's line spans, as splitLines gives them. */
function chunks(): { bytes: Buffer; spans: number[] }[] {
  const text = Buffer.from(Array.from({ length: LINES }, (_, i) => ndjsonLine(i)).join(''));
  const out: { bytes: Buffer; spans: number[] }[] = [];
  for (let at = 0; at < text.length; ) {
    let end = text.indexOf(10, Math.min(text.length - 1, at + CHUNK_BYTES));
    if (end < 0) end = text.length - 1;
    const bytes = text.subarray(at, end + 1);
    const spans: number[] = [];
    for (let start = 0; ; ) {
      const nl = bytes.indexOf(10, start);
      if (nl < 0) break;
      spans.push(start, nl);
      start = nl + 1;
    }
    out.push({ bytes, spans });
    at = end + 1;
  }
  return out;
}

/** One pass: seconds, and events out. */
function pass(input: ReturnType<typeof chunks>, withActions: boolean): { s: number; events: number } {
  let format: typeof jsonLines = jsonLines;
  if (withActions) {
    const chain = compileActionChain(ACTIONS, { onError: () => {} });
    chain.bind({ job: 'bench', worker: 'bench' });
    format = jsonLinesWithActions(chain);
  }
  const batcher = format.batcher(PLAN, META);
  let events = 0;
  const start = performance.now();
  for (const { bytes, spans } of input) {
    if (batcher.lines(bytes, spans, 0) !== spans.length) throw new Error('a line left the line path');
    events += batcher.take()?.count ?? 0;
  }
  return { s: (performance.now() - start) / 1000, events };
}

const input = chunks();
pass(input, false);
pass(input, true);
const plain: number[] = [];
const chained: number[] = [];
let kept = 0;
for (let i = 0; i < RUNS; i++) {
  plain.push(pass(input, false).s);
  const run = pass(input, true);
  chained.push(run.s);
  kept = run.events;
}
const perLine = (s: number) => `${((s / LINES) * 1e6).toFixed(2)} µs a line`;
console.log(`bench:actions:lines (${LINES} lines, median of ${RUNS})`);
console.log(`no actions                                   ${perLine(median(plain))}`);
console.log(
  `filter + set(2) + remove + rename            ${perLine(median(chained))} (${kept} kept; the chain's own cost ${perLine(median(chained) - median(plain))})`,
);
