/**
 * `sluice`: the command-line tool of the Sluice control plane.
 * Each command group registers itself from `cli/commands/<group>.ts`.
 *
 * @example
 *   sluice --help
 *   echo "$PASSWORD" | sluice token user admin --password-stdin --ttl 30m
 */
import { Command, CommanderError } from 'commander';
import { COMMAND_GROUPS } from './commands/index.ts';
import { type CliError, EXIT } from './exit-codes.ts';
import { addGlobalOptions, commandContext, type Wrap } from './globals.ts';
import type { CliIo } from './output.ts';

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
      if (err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if ((err as Error)?.name === 'CliError') {
      const cliError = err as CliError;
      io.stderr(`error: ${cliError.message}\n`);
      for (const hint of cliError.hints) io.stderr(`${hint}\n`);
      return cliError.exitCode;
    }
    io.stderr(`error: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.error;
  }
}

export async function main(argv: string[]): Promise<number> {
  return await run(argv, processIo());
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdinIsTty: Boolean(process.stdin.isTTY),
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
