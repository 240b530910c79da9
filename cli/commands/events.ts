/**
 * `sluice events ls|tail`: the event log.
 *
 * `ls` shows what happened recently, as `kubectl get events` does: the newest `--limit`
 * events (default 100), oldest first, and a note on stderr when older ones were left out.
 * It reads them newest first (`GET /api/events?order=newest`, at most 1,000 a page), so
 * it reads no more of the log than it shows.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { EventPage, EventView } from '../../shared/api/events.ts';
import { parseDuration } from '../../shared/duration.ts';
import { EventTail } from '../../shared/events/tail.ts';
import type { ApiClient } from '../api-client.ts';
import { CliError } from '../exit-codes.ts';
import { untilInterrupted } from '../interrupt.ts';
import { parseLimit } from '../list-pages.ts';
import { jsonText, printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

/** The most events one `GET /api/events` answers (its `limit`, functions/events/routes.ts). */
const PAGE_MAX = 1000;

const SINCE_FORMAT = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

/** `--since`: an RFC 3339 time with its offset (`2026-11-26T15:05:00+01:00`, `...Z`); else a usage error. */
function parseSince(given: string | undefined): Date | undefined {
  if (given === undefined) return undefined;
  const time = SINCE_FORMAT.test(given.trim())
    ? new Date(given.trim().replace(' ', 'T').toUpperCase())
    : undefined;
  if (!time || Number.isNaN(time.getTime()))
    throw CliError.usage(
      `--since: '${given}' is not a time; use RFC 3339 with a time zone, e.g. 2026-11-23T12:00:00Z or 2026-11-23T13:00:00+01:00`,
    );
  return time;
}

/** `--interval`: milliseconds (`1000`) or a duration (`2s`, `500ms`), from 100 ms to 1 h; else a usage error. */
function parseInterval(given: string): number {
  const text = given.trim();
  let ms = Number.NaN;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text);
  else {
    try {
      ms = parseDuration(text);
    } catch {
      // refused below
    }
  }
  if (!(ms >= 100 && ms <= 3_600_000))
    throw CliError.usage(
      `--interval: '${given}' is not a wait between polls; give a duration from 100ms to 1h, e.g. 2s, or a number of milliseconds`,
    );
  return ms;
}

type Filters = Record<'type' | 'job' | 'worker' | 'source', string | undefined>;

/**
 * The newest `limit` events that match `filters`, from `since` on (from the start when
 * undefined), oldest first, and whether older ones were left out.
 */
export async function newestEvents(
  api: ApiClient,
  filters: Filters,
  since: Date | undefined,
  limit: number,
): Promise<{ events: EventView[]; leftOut: boolean }> {
  // One more than asked for says whether older ones were left out.
  const newest: EventView[] = [];
  let cursor: string | undefined;
  do {
    const got = await api.get<EventPage>('/api/events', {
      query: {
        ...filters,
        order: 'newest',
        since: since?.toISOString(),
        ...(cursor ? { cursor } : {}),
        limit: String(Math.min(PAGE_MAX, limit + 1 - newest.length)),
      },
    });
    newest.push(...got.events);
    cursor = got.next_cursor ?? undefined;
  } while (cursor && newest.length <= limit);
  return { events: newest.slice(0, limit).reverse(), leftOut: newest.length > limit };
}

/** Shows each new event that matches `filters`, polling every `interval` ms until `signal` aborts. */
async function follow(
  api: ApiClient,
  filters: Filters,
  tail: EventTail,
  interval: number,
  signal: AbortSignal,
  show: (event: EventView) => void,
): Promise<void> {
  while (!signal.aborted) {
    // From the settle time before the newest event shown (events that commit late
    // land there), then page by page while pages are full.
    let cursor: string | undefined;
    do {
      const page = await eventsPage(api, filters, cursor ? { cursor } : { since: tail.since() }, signal);
      // Interrupted: what the last poll read is not shown, so nothing comes after Ctrl-C.
      if (!page) return;
      for (const event of tail.fresh(page.events)) show(event);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    // Rejects only when interrupted, which ends the loop.
    await sleep(interval, undefined, { signal }).catch(() => {});
  }
}

/** One page of the tail's poll; undefined once `signal` aborted (the request is cut off). */
async function eventsPage(
  api: ApiClient,
  filters: Filters,
  from: { cursor: string } | { since: string },
  signal: AbortSignal,
): Promise<EventPage | undefined> {
  if (signal.aborted) return undefined;
  try {
    return await api.get<EventPage>('/api/events', { query: { ...filters, ...from, limit: '500' }, signal });
  } catch (err) {
    // After the interrupt, the request's failure is not the tail's.
    if (signal.aborted) return undefined;
    throw err;
  }
}

export const eventsCommands: CommandGroup = (program, wrap) => {
  const events = program.command('events').description('The event log');
  const filters = (cmd: ReturnType<typeof events.command>) =>
    cmd
      .option('--type <types>', 'comma-separated event types, e.g. job-deployed,job-staged')
      .option('--job <name>')
      .option('--worker <id>')
      .option('--source <source>', 'job, worker or server')
      .option('--since <time>', 'RFC 3339 time, e.g. 2026-11-23T12:00:00Z or 2026-11-23T13:00:00+01:00');
  const filtersOf = (o: Record<string, string | undefined>): Filters => ({
    type: o.type,
    job: o.job,
    worker: o.worker,
    source: o.source,
  });

  filters(events.command('ls').description('List the newest events, oldest first'))
    .option('--limit <n>', 'show the newest N (older ones are left out, with a note on stderr)', '100')
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as Record<string, string | undefined>;
        const limit = parseLimit(o.limit) ?? 100;
        const since = parseSince(o.since);
        const { events, leftOut } = await newestEvents(await ctx.api(), filtersOf(o), since, limit);
        printResult(ctx.io, events, ctx.globals.output, {
          columns: ['time', 'type', 'source', 'job', 'worker', 'payload'],
        });
        if (leftOut)
          ctx.io.stderr(
            `showing the newest ${limit} event${limit === 1 ? '' : 's'}, from ${events[0]?.time}; older ones were left out: ` +
              (o.since === undefined
                ? 'show more with --limit N, or those from a time on with --since TIME\n'
                : `show more of those since ${o.since} with a larger --limit N\n`),
          );
      }),
    );

  filters(events.command('tail').description('Follow new events until Ctrl-C (one JSON event per line)'))
    .option(
      '--interval <wait>',
      'time between polls: a duration from 100ms to 1h, e.g. 2s, or milliseconds',
      '1s',
    )
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as Record<string, string | undefined>;
        const start = parseSince(o.since) ?? new Date();
        const interval = parseInterval(o.interval ?? '1s');
        const api = await ctx.api();
        // Ctrl-C, or a reader that went away (`sluice events tail | head -1`).
        const interrupt = untilInterrupted(ctx.io.stdoutClosed);
        try {
          await follow(api, filtersOf(o), new EventTail(start), interval, interrupt.signal, (event) =>
            ctx.io.stdout(`${jsonText(event)}\n`),
          );
        } finally {
          interrupt.dispose();
        }
      }),
    );
};
