/** `sluice message send [--type] --tag T [--payload JSON] [--worker W] [--job J]`. */
import { CliError } from '../exit-codes.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

export const messageCommands: CommandGroup = (program, wrap) => {
  const message = program.command('message').description('User messages for message-triggered inputs');
  message
    .command('send')
    .description('Send a message to workers (all, or --worker)')
    .option('--type <type>', 'user-generated, user-alert or user-notification', 'user-generated')
    .option('--tag <tag...>', 'tags (filter-tag matches user-generated messages)')
    .option('--payload <json>', 'a JSON object', '{}')
    .option('--worker <id>', 'only this worker')
    .option('--job <name>', 'the job the message is about')
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as { type: string; tag?: string[]; payload: string; worker?: string; job?: string };
        let payload: unknown;
        try {
          payload = JSON.parse(o.payload);
        } catch {
          throw CliError.usage(`--payload must be JSON, got ${o.payload}`);
        }
        const answer = await (await ctx.api()).post('/api/messages', {
          body: {
            type: o.type,
            tags: o.tag ?? [],
            payload,
            ...(o.worker ? { worker: o.worker } : {}),
            ...(o.job ? { job: o.job } : {}),
          },
        });
        printResult(ctx.io, answer, ctx.globals.output);
      }),
    );
};
