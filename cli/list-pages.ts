/**
 * The `ls` commands' `--limit N`: list endpoints answer a page at a time
 * (shared/api/paging.ts), and `ls` follows the pages to the end unless told to stop.
 *
 * @example
 *   command.option(...LIMIT_OPTION).action(wrap(async (ctx, opts) => listAll(ctx, '/api/jobs', opts)));
 */
import { CliError } from './exit-codes.ts';
import type { CommandContext } from './globals.ts';

export const LIMIT_OPTION = ['--limit <n>', 'show at most N items (default: all of them)'] as const;

export async function listAll<T = unknown>(ctx: CommandContext, path: string, opts: unknown): Promise<T[]> {
  const given = (opts as { limit?: string } | undefined)?.limit;
  let limit: number | undefined;
  if (given !== undefined) {
    limit = Number(given);
    if (!Number.isInteger(limit) || limit < 1)
      throw CliError.usage(`--limit takes a whole number of 1 or more, not "${given}"`);
  }
  return (await ctx.api()).list<T>(path, limit === undefined ? {} : { limit });
}
