/** The `pubsub` output: publishes each event as one Pub/Sub message. */
import { z } from 'zod';
import { googleCredentialsSchema } from '../credentials.ts';
import type { Fields } from '../fields.ts';
import { byteSizeField } from './batching.ts';

/** `projects/<project>/topics/<topic>` or a topic name of the credentials' project. */
export const TOPIC = /^(projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/topics\/)?[A-Za-z][A-Za-z0-9._~%+-]{2,254}$/;

export function pubsubOutputSchema(f: Fields) {
  return f
    .strict(
      {
        topic: f.typed(
          z
            .string()
            .regex(
              TOPIC,
              'must be projects/<project>/topics/<topic> or a topic name (a letter, then 3-255 letters, digits, . _ ~ % + -)',
            ),
          "The topic: projects/<project>/topics/<topic>, or a topic name of the credentials' project.",
        ),
        credentials: googleCredentialsSchema(f, 'output.pubsub.credentials').optional(),
        attributes: z
          .record(z.string(), f.fieldName('Event field whose value becomes the attribute.'))
          .default({})
          .describe(
            'Message attributes from event fields: attribute name → field name (values as text; absent fields are left out).',
          ),
        'ordering-key': f
          .fieldName('Event field whose value is the ordering key (messages with one key arrive in order).')
          .optional(),
        batching: f
          .strict(
            {
              'max-messages': f.integer('Messages per publish request.', 1).default(100),
              'max-bytes': byteSizeField(f, 'Bytes per publish request.', 9 * 1024 ** 2).default('1MiB'),
              'max-latency': f.duration('Longest a message waits for its request to fill.').default('10ms'),
            },
            'output.pubsub.batching',
          )
          .default({ 'max-messages': 100, 'max-bytes': '1MiB', 'max-latency': '10ms' })
          .describe("The client library's batching settings."),
      },
      'output.pubsub',
    )
    .describe('Publishes each event to a Pub/Sub topic (the event as JSON is the message data).');
}
