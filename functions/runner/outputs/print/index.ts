/**
 * The `print` output: one JSON event per line. A batch becomes one write, and the
 * output waits for the stream to drain, so a slow consumer slows the job instead of
 * growing memory. Once the stream fails (its reader went away), every write rejects.
 *
 * @example
 *   const output = createPrintOutput(process.stdout);
 *   await output.write([{ a: 1 }, { a: 2 }]);
 */
import type { Writable } from 'node:stream';
import { eventJson, type Output, type RunEvent } from '../../types.ts';

export function createPrintOutput(stream: Writable): Output {
  // A reader that went away (`sluice job run ... | head`) is an error of this output's
  // writes, not an unhandled 'error' event that ends the process with a stack trace.
  let failure: Error | undefined;
  stream.on('error', (err) => {
    failure ??= err;
  });
  return {
    async write(events: RunEvent[]) {
      if (failure || stream.destroyed) throw closed(failure);
      if (events.length === 0) return;
      let text = '';
      for (const event of events) text += `${eventJson(event)}\n`;
      if (stream.write(text)) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('close', done);
          stream.off('error', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('close', done);
        stream.on('error', done);
      });
      if (failure) throw closed(failure);
    },
    async close() {},
  };
}

function closed(cause: Error | undefined): Error {
  return Object.assign(new Error(`the print output is closed${cause ? `: ${cause.message}` : ''}`), {
    code: (cause as NodeJS.ErrnoException | undefined)?.code ?? 'ERR_STREAM_DESTROYED',
  });
}
