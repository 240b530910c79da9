/**
 * The `print` output: one JSON event per line. A batch becomes one write, and the
 * output waits for the stream to drain, so a slow consumer slows the job instead of
 * growing memory.
 *
 * @example
 *   const output = createPrintOutput(process.stdout);
 *   await output.write([{ a: 1 }, { a: 2 }]);
 */
import type { Writable } from 'node:stream';
import type { Output, RunEvent } from '../../types.ts';

export function createPrintOutput(stream: Writable): Output {
  return {
    async write(events: RunEvent[]) {
      if (events.length === 0) return;
      let text = '';
      for (const event of events) text += `${JSON.stringify(event)}\n`;
      if (!stream.write(text)) await new Promise<void>((resolve) => stream.once('drain', resolve));
    },
    async close() {},
  };
}
