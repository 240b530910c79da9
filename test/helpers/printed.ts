/**
 * A `print` output that keeps what it printed, for tests that run jobs in this process
 * (the cloud worker's runners).
 *
 * @example
 *   const out = printed();
 *   await startPullRunner(deps, { owner: 'r', print: out.output });
 *   out.lines(); // every complete line printed so far
 */
import { Writable } from 'node:stream';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';

export function printed(): { output: ReturnType<typeof createPrintOutput>; lines: () => string[] } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { output: createPrintOutput(stream), lines: () => text.split('\n').filter(Boolean) };
}
