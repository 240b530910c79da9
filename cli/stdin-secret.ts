/**
 * Passwords, keys and secret values come from standard input only (never arguments,
 * which `ps` shows). One trailing newline is dropped, so `echo` and files both work.
 *
 * @example
 *   const password = await readSecretFromStdin(ctx.io, 'password');
 */
import { CliError, EXIT } from './exit-codes.ts';
import type { CliIo } from './output.ts';

export async function readSecretFromStdin(io: CliIo, what: string): Promise<string> {
  if (io.stdinIsTty) {
    const file = `${what.trim().replace(/\W+/g, '-').toLowerCase()}.txt`;
    throw CliError.usage(`pipe the ${what} on standard input, e.g. \`cat ${file} | sluice ...\``);
  }
  const value = (await io.readStdin()).replace(/\r?\n$/, '');
  if (!value) throw CliError.usage(`standard input was empty: expected the ${what}`);
  return value;
}

/**
 * Refuses a secret that must be one line (a password) when it holds a line break (`\r` or
 * `\n`) after the one trailing newline was dropped: stored as is, it would never match what
 * anyone types. `hint` says what to do instead.
 *
 * @example
 *   const password = oneLine(await readSecretFromStdin(ctx.io, 'password'), 'the password');
 */
export function oneLine(value: string, what: string, hint?: string): string {
  if (/[\r\n]/.test(value))
    throw new CliError(
      `${what} holds a line break: pipe it as one line (nothing was sent)`,
      EXIT.usage,
      hint ? [hint] : [],
    );
  return value;
}
