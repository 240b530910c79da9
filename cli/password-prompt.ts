/**
 * Asks for a password on a terminal without echoing it, as `sudo` and `ssh` do: the prompt
 * on `output` (standard error, so standard output stays clean for `token user`), one line
 * read from `input` in raw mode. Node's readline does the line editing (backspace, Ctrl-U)
 * and restores the terminal; its echo goes to a stream that drops everything. No library:
 * the only prompt packages in node_modules (@inquirer/password, mute-stream) come with
 * firebase-tools, a devDependency, so an installed CLI would not have them.
 *
 * @example
 *   const password = await promptHidden('Password: ', { input: process.stdin, output: process.stderr });
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError, EXIT } from './exit-codes.ts';

export interface PromptStreams {
  /** A terminal: `isTTY`, and `setRawMode`, which readline calls. */
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
}

/**
 * The line typed after `prompt`, without its line end. Ctrl-C rejects (nothing is sent);
 * so does the end of input (Ctrl-D on an empty line). The terminal is back in its normal
 * mode and `input` paused, so the process can exit, whichever way it ends.
 */
export function promptHidden(prompt: string, { input, output }: PromptStreams): Promise<string> {
  const muted = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  // Raw mode (no echo) before the prompt shows: keys typed after seeing it are never echoed.
  const rl = createInterface({ input, output: muted, terminal: true, historySize: 0 });
  output.write(prompt);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (answer: { line: string } | { error: CliError }) => {
      if (settled) return;
      settled = true;
      rl.close();
      // The Enter the terminal did not echo.
      output.write('\n');
      if ('line' in answer) resolve(answer.line);
      else reject(answer.error);
    };
    rl.on('line', (line) => settle({ line }));
    rl.on('SIGINT', () => settle({ error: new CliError('cancelled (nothing was sent)', EXIT.error) }));
    rl.on('close', () =>
      settle({ error: CliError.usage('no password given: the input ended (nothing was sent)') }),
    );
  });
}
