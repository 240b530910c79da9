/**
 * The `ls` commands' `--limit N`: list endpoints answer a page at a time
 * (shared/api/paging.ts), and `ls` follows the pages to the end unless told to stop.
 *
 * @example
 *   command.option(...LIMIT_OPTION).action(wrap(async (ctx, opts) => listAll(ctx, '/api/jobs', opts)));
 */
import type { Command } from 'commander';
import { CliError } from './exit-codes.ts';
import type { CommandContext, Wrap } from './globals.ts';
import { printResult } from './output.ts';

export const LIMIT_OPTION = ['--limit <n>', 'show at most N items (default: all of them)'] as const;

/** `--limit N` as a number (undefined when not given); anything but a whole number of 1 or more is a usage error. */
export function parseLimit(given: string | undefined): number | undefined {
  if (given === undefined) return undefined;
  const limit = Number(given);
  if (!Number.isInteger(limit) || limit < 1)
    throw CliError.usage(`--limit takes a whole number of 1 or more, not "${given}"`);
  return limit;
}

export async function listAll<T = unknown>(ctx: CommandContext, path: string, opts: unknown): Promise<T[]> {
  const limit = parseLimit((opts as { limit?: string } | undefined)?.limit);
  return (await ctx.api()).list<T>(path, limit === undefined ? {} : { limit });
}

/** `GROUP ls [--limit N]`: every page of `path`, printed as a table of `columns` (or -o json|yaml). */
export function addListCommand(
  group: Command,
  wrap: Wrap,
  list: { path: string; columns: string[]; description?: string },
): void {
  const ls = group.command('ls');
  if (list.description) ls.description(list.description);
  ls.option(...LIMIT_OPTION).action(
    wrap(async (ctx, opts) =>
      printResult(ctx.io, await listAll(ctx, list.path, opts), ctx.globals.output, { columns: list.columns }),
    ),
  );
}
