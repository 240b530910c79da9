/**
 * Passwords, keys and secret values come from standard input only (never arguments,
 * which `ps` shows). One trailing newline is dropped, so `echo` and files both work. A
 * password, when standard input is a terminal, is asked for there without echo instead
 * (`askPassword`, `readNewPassword`).
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

/** Whether a password can be asked for: standard input is a terminal the io can prompt on. */
export function canPrompt(io: CliIo): io is CliIo & { promptHidden: (prompt: string) => Promise<string> } {
  return io.stdinIsTty && io.promptHidden !== undefined;
}

/** `prompt` answered on the terminal without echo; an empty answer is a usage error. */
export async function askPassword(io: CliIo, prompt: string): Promise<string> {
  if (!canPrompt(io))
    throw CliError.usage('standard input is not a terminal: the password cannot be asked for');
  const answer = await io.promptHidden(prompt);
  if (!answer) throw CliError.usage('no password given (nothing was sent)');
  return answer;
}

/**
 * A new password for `username`: on a terminal asked for twice without echo (a mismatch is
 * a usage error, nothing sent), else one line read from standard input, refused (with
 * `hint`) when it holds a line break.
 */
export async function readNewPassword(
  io: CliIo,
  username: string,
  hint?: string,
  what = 'the new password',
): Promise<string> {
  if (!canPrompt(io)) return oneLine(await readSecretFromStdin(io, 'password'), what, hint);
  const password = await askPassword(io, `New password for ${username}: `);
  await confirmPassword(io, password);
  return password;
}

/** Asks for `password` again; a different answer is a usage error, nothing sent. */
export async function confirmPassword(io: CliIo, password: string): Promise<void> {
  if (!canPrompt(io)) return;
  if ((await io.promptHidden('Retype the new password: ')) !== password)
    throw CliError.usage('the passwords did not match (nothing was sent)');
}
