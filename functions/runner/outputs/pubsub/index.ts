/**
 * The `pubsub` output: one message per event (the event as JSON), with `attributes` and an
 * `ordering-key` from event fields, batched by the client library's batching settings.
 * At most `MAX_OUTSTANDING` (2,000) messages wait for the server at once; `write` waits for the
 * oldest beyond that (backpressure). `acknowledge` flushes the client's batches and waits
 * for every publish to be accepted; a failed publish fails it (nothing is committed).
 * Events that arrive as JSON lines and need no fields read are published as the line's
 * bytes, unparsed.
 *
 * @example
 *   const output = createPubsubOutput(job.output.pubsub, { report, metrics });
 */
import type { Topic } from '@google-cloud/pubsub';
import { parseByteSize } from '../../../../shared/byte-size.ts';
import { parseDuration } from '../../../../shared/duration.ts';
import type { PubsubOutput } from '../../../../shared/job/schema.ts';
import { excerpt } from '../../excerpt.ts';
import {
  type JsonLines,
  markReported,
  type Output,
  type OutputMetrics,
  type RunEvent,
  type RunReport,
} from '../../types.ts';
import { fieldValue } from '../field-value.ts';
import { topicFor } from './client.ts';

export interface PubsubOutputOptions {
  report: (report: RunReport) => void;
  metrics: OutputMetrics;
  /** A ready topic (tests, benchmarks). */
  topic?: Topic;
}

/**
 * Publishes awaiting the server before `write` waits. 2,000 publish as fast as 10,000 did
 * (bench:outputs) and keep a 1M-event run under 256 MB; 10,000 took it to 271 MB.
 */
export const MAX_OUTSTANDING = 2_000;

const NEWLINE = 0x0a;

export function createPubsubOutput(config: PubsubOutput, options: PubsubOutputOptions): Output {
  const { metrics } = options;
  const batching = config.batching;
  const publishOptions = {
    batching: {
      maxMessages: batching['max-messages'],
      maxBytes: parseByteSize(batching['max-bytes']),
      maxMilliseconds: parseDuration(batching['max-latency']),
    },
    messageOrdering: config['ordering-key'] !== undefined,
  };
  let topic: Promise<Topic> | undefined;
  const topicOf = () => {
    topic ??= options.topic
      ? Promise.resolve(options.topic)
      : topicFor(config, publishOptions).then((t) => t.topic);
    return topic;
  };
  // Publishes in flight, oldest first, as a ring of promises cleared in bulk.
  let pending: Promise<unknown>[] = [];
  let failure: Error | undefined;
  const attributeEntries = Object.entries(config.attributes);
  const orderingField = config['ordering-key'];

  const track = (promise: Promise<unknown>, bytes: number) => {
    pending.push(
      promise.then(
        () => {
          metrics.events++;
          metrics.bytes += bytes;
        },
        (err: Error) => {
          metrics.failures++;
          if (!failure) {
            failure = markReported(err);
            options.report({
              type: 'job-errors',
              payload: { output: 'pubsub', topic: config.topic, reason: excerpt(String(err.message), 500) },
            });
          }
        },
      ),
    );
  };
  /** Waits for the older half of what is in flight once too much is. */
  const pushBack = async () => {
    if (pending.length < MAX_OUTSTANDING) return;
    const older = pending.slice(0, pending.length / 2);
    pending = pending.slice(older.length);
    await Promise.all(older);
  };
  const throwIfFailed = () => {
    if (failure) throw failure;
  };

  const output: Output = {
    async write(events: RunEvent[]) {
      throwIfFailed();
      const t = await topicOf();
      metrics.batches++;
      for (const event of events) {
        const data = Buffer.from(JSON.stringify(event));
        const attributes: Record<string, string> = {};
        for (const [name, field] of attributeEntries) {
          const value = fieldValue(event, field);
          if (value !== undefined && value !== null)
            attributes[name] = typeof value === 'string' ? value : JSON.stringify(value);
        }
        const key = orderingField !== undefined ? fieldValue(event, orderingField) : undefined;
        const orderingKey = key === undefined || key === null ? undefined : String(key);
        const publishing = t.publishMessage({ data, attributes, ...(orderingKey ? { orderingKey } : {}) });
        if (orderingKey) publishing.catch(() => t.resumePublishing(orderingKey));
        track(publishing, data.length);
        await pushBack();
      }
    },
    async acknowledge() {
      if (topic) await (await topic).flush();
      const all = pending;
      pending = [];
      await Promise.all(all);
      throwIfFailed();
    },
    async close() {
      await Promise.all(pending);
    },
  };
  if (attributeEntries.length === 0 && orderingField === undefined) {
    output.writeJsonLines = async (lines: JsonLines) => {
      throwIfFailed();
      const t = await topicOf();
      metrics.batches++;
      for (const chunk of lines.chunks) {
        let start = 0;
        while (start < chunk.length) {
          const end = chunk.indexOf(NEWLINE, start);
          const stop = end === -1 ? chunk.length : end;
          const data = chunk.subarray(start, stop);
          track(t.publishMessage({ data }), data.length);
          start = stop + 1;
        }
        await pushBack();
      }
    };
  }
  return output;
}
