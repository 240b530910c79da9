/**
 * The `print` output: one JSON event per line. Events an input already holds as JSON
 * lines (`writeJsonLines`) are written as they are, and released once written. A batch
 * is written at once, and the output waits for the stream to drain, so a slow consumer
 * slows the job instead of growing memory. Once the stream fails (its reader went away),
 * every write rejects.
 *
 * @example
 *   const output = createPrintOutput(process.stdout);
 *   await output.write([{ a: 1 }, { a: 2 }]);
 */
import type { Writable } from 'node:stream';
import type { JsonLines, Output, RunEvent } from '../../types.ts';

export function createPrintOutput(stream: Writable): Output {
  // A reader that went away (`sluice job run ... | head`) is an error of this output's
  // writes, not an unhandled 'error' event that ends the process with a stack trace.
  let failure: Error | undefined;
  stream.on('error', (err) => {
    failure ??= err;
  });
  /** Writes `texts`; `written` is called once the stream is done with them all (not on failure). */
  const writeText = async (texts: (string | Buffer)[], written?: () => void) => {
    if (failure || stream.destroyed) throw closed(failure);
    let ready = true;
    let left = 0;
    for (const text of texts) {
      if (!text.length) continue;
      left++;
      ready = stream.write(text, (err) => {
        if (!err && --left === 0) written?.();
      });
    }
    if (left === 0) written?.();
    if (ready) return;
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
  };
  return {
    async write(events: RunEvent[]) {
      let text = '';
      for (const event of events) text += `${JSON.stringify(event)}\n`;
      await writeText([text]);
    },
    async writeJsonLines(lines: JsonLines) {
      // Their memory is given back as soon as the stream has written them (read threads reuse it).
      await writeText(lines.chunks, lines.release);
    },
    async close() {},
  };
}

function closed(cause: Error | undefined): Error {
  const message = cause
    ? `could not write the print output (standard output): ${cause.message}`
    : 'the print output is closed';
  return Object.assign(new Error(message), {
    code: (cause as NodeJS.ErrnoException | undefined)?.code ?? 'ERR_STREAM_DESTROYED',
  });
}
