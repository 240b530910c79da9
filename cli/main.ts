/**
 * `sluice`: the command-line tool of the Sluice control plane.
 * Each command group registers itself from `cli/commands/<group>.ts`.
 *
 * @example
 *   sluice --help
 *   echo "$PASSWORD" | sluice token user admin --password-stdin --ttl 30m
 */
import { Command, CommanderError } from 'commander';
import { terminalText } from '../shared/terminal-text.ts';
import { COMMAND_GROUPS } from './commands/index.ts';
import { type CliError, EXIT } from './exit-codes.ts';
import { addGlobalOptions, commandContext, type Wrap } from './globals.ts';
import type { CliIo } from './output.ts';
import { promptHidden } from './password-prompt.ts';

export function buildProgram(io: CliIo, env: NodeJS.ProcessEnv = process.env): Command {
  const program = addGlobalOptions(new Command('sluice'))
    .description('Command-line tool for the Sluice data-pipeline control plane')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();
  const wrap: Wrap = (action) =>
    async function (this: Command, ...args: unknown[]) {
      const command = args[args.length - 1] as Command;
      await action(commandContext(io, command, env), ...args);
    };
  for (const register of COMMAND_GROUPS) register(program, wrap);
  for (const command of allCommands(program)) {
    command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    requireAfterTypos(command);
  }
  return program;
}

/**
 * Commander checks required options before unknown ones and missing arguments, so
 * `job deploy web --wroker w1` said only "required option '-w, --worker' not specified",
 * never the typo it could suggest a fix for. Required options are checked just before the
 * action instead, after commander has reported those.
 */
function requireAfterTypos(command: Command): void {
  const required = command.options.filter((option) => option.mandatory);
  if (!required.length) return;
  for (const option of required) option.mandatory = false;
  command.hook('preAction', () => {
    for (const option of required) {
      if (command.getOptionValue(option.attributeName()) === undefined)
        command.error(`error: required option '${option.flags}' not specified`, {
          code: 'commander.missingMandatoryOptionValue',
        });
    }
  });
}

export async function run(argv: string[], io: CliIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram(io, env);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0)
        return EXIT.ok;
      // `sluice` or `sluice job` with no subcommand: the help, on stderr, and a usage error,
      // so a script whose subcommand came out empty does not pass for a success.
      return EXIT.usage;
    }
    // Standard output failed (stdoutWriter): `main` says how, or nothing for a reader that went away.
    if ((err as Error)?.name === STDOUT_FAILED) return EXIT.ok;
    // Messages and hints quote the server and the user's files: shown, never obeyed.
    if ((err as Error)?.name === 'CliError') {
      const cliError = err as CliError;
      io.stderr(`error: ${terminalText(cliError.message)}\n`);
      for (const hint of cliError.hints) io.stderr(`${terminalText(hint)}\n`);
      return cliError.exitCode;
    }
    io.stderr(`error: ${terminalText((err as Error)?.message ?? String(err))}\n`);
    return EXIT.error;
  }
}

export async function main(argv: string[]): Promise<number> {
  const out = stdoutWriter(process.stdout);
  const code = await run(argv, processIo(out));
  // A failed write's 'error' event comes a tick after the write.
  await new Promise((r) => setImmediate(r));
  const failure = out.failure();
  if (!failure) return code;
  process.stderr.write(`error: cannot write to standard output: ${failure.message}\n`);
  return code === EXIT.ok ? EXIT.error : code;
}

/** The name of the error a write to a failed standard output throws (see stdoutWriter). */
const STDOUT_FAILED = 'StdoutFailed';

/**
 * Writes to standard output for every command. A reader that went away (`sluice events ls |
 * head -1`: EPIPE) ends the command quietly with exit 0, as a closed pipe ends `ls` or `git
 * log`; any other failure to write (a full disk) is a failed command, said by `main`. Either
 * way `closed` aborts, which stops a command that runs until Ctrl-C (`events tail`), and a
 * later write throws, which ends a command that is still printing.
 */
export function stdoutWriter(stream: NodeJS.WritableStream): {
  write: (text: string) => void;
  closed: AbortSignal;
  /** The failure other than a reader that went away, once there was one. */
  failure: () => Error | undefined;
} {
  const closed = new AbortController();
  let failure: Error | undefined;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (closed.signal.aborted) return;
    if (err.code !== 'EPIPE') failure = err;
    closed.abort();
  });
  return {
    write(text) {
      if (closed.signal.aborted)
        throw Object.assign(new Error('standard output is closed'), { name: STDOUT_FAILED });
      stream.write(text);
    },
    closed: closed.signal,
    failure: () => failure,
  };
}

export function processIo(out = stdoutWriter(process.stdout)): CliIo {
  // Where standard error went away too (`sluice ... 2>&1 | head -1`), nothing is left to tell.
  process.stderr.on('error', () => {});
  return {
    stdout: out.write,
    stdoutClosed: out.closed,
    // Everything on standard error is for people: notes, hints, errors (see terminalText).
    stderr: (text) => process.stderr.write(terminalText(text)),
    stdinIsTty: Boolean(process.stdin.isTTY),
    ...(process.stdin.isTTY
      ? {
          promptHidden: (prompt: string) =>
            promptHidden(prompt, { input: process.stdin, output: process.stderr }),
        }
      : {}),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

function* allCommands(command: Command): Generator<Command> {
  for (const sub of command.commands) {
    yield sub;
    yield* allCommands(sub);
  }
}
