/** `sluice events ls|tail`: the event log. */

import type { EventPage } from '../../shared/api/events.ts';
import { EventTail } from '../../shared/events/tail.ts';
import { CliError } from '../exit-codes.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

export const eventsCommands: CommandGroup = (program, wrap) => {
  const events = program.command('events').description('The event log');
  const filters = (cmd: ReturnType<typeof events.command>) =>
    cmd
      .option('--type <types>', 'comma-separated event types, e.g. job-deployed,job-staged')
      .option('--job <name>')
      .option('--worker <id>')
      .option('--source <source>', 'job, worker or server')
      .option('--since <time>', 'RFC 3339 time');

  filters(events.command('ls').description('List events, oldest first'))
    .option('--limit <n>', 'at most this many', '100')
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as Record<string, string | undefined>;
        const page = await (await ctx.api()).get<EventPage>('/api/events', {
          query: {
            type: o.type,
            job: o.job,
            worker: o.worker,
            source: o.source,
            since: o.since,
            limit: o.limit,
          },
        });
        printResult(ctx.io, page.events, ctx.globals.output, {
          columns: ['time', 'type', 'source', 'job', 'worker', 'payload'],
        });
      }),
    );

  filters(events.command('tail').description('Follow new events until Ctrl-C (one JSON event per line)'))
    .option('--interval <ms>', 'poll interval', '1000')
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as Record<string, string | undefined>;
        const start = o.since === undefined ? new Date() : new Date(o.since);
        if (Number.isNaN(start.getTime()))
          throw CliError.usage(
            `--since: '${o.since}' is not a time; use RFC 3339, e.g. 2026-11-23T12:00:00Z`,
          );
        const api = await ctx.api();
        const tail = new EventTail(start);
        for (;;) {
          // From the settle time before the newest event shown (events that commit late
          // land there), then page by page while pages are full.
          let cursor: string | undefined;
          do {
            const page = await api.get<EventPage>('/api/events', {
              query: {
                type: o.type,
                job: o.job,
                worker: o.worker,
                source: o.source,
                ...(cursor ? { cursor } : { since: tail.since() }),
                limit: '500',
              },
            });
            for (const event of tail.fresh(page.events)) ctx.io.stdout(`${JSON.stringify(event)}\n`);
            cursor = page.next_cursor ?? undefined;
          } while (cursor);
          await new Promise((r) => setTimeout(r, Number(o.interval)));
        }
      }),
    );
};
