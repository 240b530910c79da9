/**
 * Passwords, keys and secret values come from standard input only (never arguments,
 * which `ps` shows). One trailing newline is dropped, so `echo` and files both work.
 *
 * @example
 *   const password = await readSecretFromStdin(ctx.io, 'password');
 */
import { CliError } from './exit-codes.ts';
import type { CliIo } from './output.ts';

export async function readSecretFromStdin(io: CliIo, what: string): Promise<string> {
  if (io.stdinIsTty)
    throw CliError.usage(`pipe the ${what} on standard input, e.g. \`cat ${what}.txt | sluice ...\``);
  const value = (await io.readStdin()).replace(/\r?\n$/, '');
  if (!value) throw CliError.usage(`standard input was empty: expected the ${what}`);
  return value;
}
