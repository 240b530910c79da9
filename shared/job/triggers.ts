/**
 * When an input runs (seed: Trigger object). Exactly one of `message`, `cron`,
 * `interval`; without a trigger the input runs exactly once.
 */
import { z } from 'zod';
import { EVENT_KINDS, EVENT_SOURCES, EVENT_TYPES } from '../events/vocabulary.ts';
import { exactlyOne, type Fields } from './fields.ts';

export function triggerSchema(f: Fields) {
  const start = f
    .strict(
      {
        'start-time': f
          .strict(
            {
              'start-time': f.startTime('Where the first window begins, as %Y-%m-%d %H:%M:%S%.3f %z.'),
              'highwatermark-file': f.string(
                'Name under which the end of the last delivered window is kept, to resume after a restart: in the state dir of `sluice job run` / `sluice worker run` (`<job>.watermarks.json`), in Firestore on the cloud worker. A name, not a path: a job never writes files of its choosing on a worker.',
              ),
            },
            'window.start.start-time',
          )
          .optional()
          .describe('Begin at a fixed time and resume from the high-watermark file.'),
        tracked: f
          .string(
            'Name under which the window position is tracked across restarts (kept like highwatermark-file).',
          )
          .optional(),
      },
      'window.start',
    )
    .superRefine(exactlyOne('window.start', ['start-time', 'tracked']))
    .describe('Where the window begins and how to resume after a restart: `start-time` or `tracked`.');

  const window = f
    .strict(
      {
        size: f.duration('Window size: the time range each run covers.'),
        offset: f.duration('Shift of the window back from now.').default('0s'),
        start: start.optional(),
      },
      'window',
    )
    .describe('A bounded read range: each run covers the next window of `size`.');

  const message = f
    .strict(
      {
        limit: f.integer('Number of times to run the input.', 1).optional(),
        'filter-kind': f.enumOf(EVENT_KINDS, 'Message origin/kind to match.').optional(),
        'filter-source': z
          .array(f.enumOf(EVENT_SOURCES, 'Process that generated the message.'))
          .describe('Which processes generated the message: job, worker, server.')
          .optional(),
        'filter-worker': f.string('Worker to select.').optional(),
        'filter-job': f.string('Job name the message came from.').optional(),
        'filter-type': z
          .array(f.enumOf(EVENT_TYPES as unknown as [string, ...string[]], 'An event type.'))
          .describe('Message types to match (the event vocabulary).')
          .optional(),
        'filter-tag': f
          .string('Match messages carrying a tag with this value; only matches user-generated messages.')
          .optional(),
      },
      'trigger.message',
    )
    .describe('Run when a matching message arrives.');

  const cron = f
    .strict(
      {
        cron: f.cron('The cron pattern: 5 fields, or 6 with seconds first.'),
        immediate: f.boolean('Run at once instead of waiting for the first cron time.').default(false),
        'random-offset': f.duration('Random offset, chosen once and then kept.').default('0s'),
        window: window.optional(),
      },
      'trigger.cron',
    )
    .describe('Run on a cron schedule.');

  const interval = f
    .strict(
      {
        duration: f.duration('Wait between runs (more than 0).', { positive: true }),
        'random-offset': f.duration('Random offset, chosen once and then kept.').default('0s'),
        window: window.optional(),
      },
      'trigger.interval',
    )
    .describe('Run at a fixed interval.');

  return f
    .strict({ message: message.optional(), cron: cron.optional(), interval: interval.optional() }, 'trigger')
    .superRefine(exactlyOne('trigger', ['message', 'cron', 'interval']))
    .describe(
      'When the input runs: exactly one of message, cron, interval. Without a trigger the input runs once.',
    );
}
