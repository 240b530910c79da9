/**
 * The floor of `npm run bench:outputs`' pubsub figure: a plain `@google-cloud/pubsub`
 * publisher, in a process of its own, publishing the benchmark's lines (the same messages
 * the `pubsub` output sends) with the same batching, and at most as many messages in
 * flight as the output allows. Prints `{ "events": N, "runS": S }` on standard error.
 *
 * @example
 *   PUBSUB_EMULATOR_HOST=127.0.0.1:8085 tsx bench/pubsub-publisher.ts projects/p/topics/t 1000000
 */
import { PubSub } from '@google-cloud/pubsub';
import { MAX_OUTSTANDING } from '../functions/runner/outputs/pubsub/index.ts';
import { benchLine } from './output-lines.ts';

const [topicName, count] = [process.argv[2]!, Number(process.argv[3])];
const [, project, topicId] = /^projects\/([^/]+)\/topics\/(.+)$/.exec(topicName)!;
const started = performance.now();
const pubsub = new PubSub({ projectId: project! });
// The output's defaults (shared/job/outputs/pubsub.ts): 100 messages, 1 MiB, 10 ms.
const topic = pubsub.topic(topicId!, {
  batching: { maxMessages: 100, maxBytes: 1024 ** 2, maxMilliseconds: 10 },
});
let inFlight: Promise<string>[] = [];
for (let i = 0; i < count; i++) {
  // A line without its newline, as the output publishes it.
  inFlight.push(topic.publishMessage({ data: Buffer.from(benchLine(i).slice(0, -1)) }));
  if (inFlight.length >= MAX_OUTSTANDING) {
    await Promise.all(inFlight);
    inFlight = [];
  }
}
await topic.flush();
await Promise.all(inFlight);
const runS = (performance.now() - started) / 1000;
await pubsub.close();
console.error(JSON.stringify({ events: count, runS }));
