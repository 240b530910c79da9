/**
 * `npm run bench:context`:
 * - fan-out latency: 100 simulated workers, each with its own subscription and
 *   streaming pull; time from the `update-global` answer to the last worker holding
 *   the message, p50/p99 over 20 updates (target p99 < 1 s);
 * - render throughput of the 60-line gcs job with 20 references (target 50,000/s),
 *   rendering alone and rendering plus rendered-level validation;
 * - `GET /api/contexts/global` requests/s and p99 on one local process.
 * Starts its own emulators unless FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST are set.
 */
import { readFileSync } from 'node:fs';
import type { Message, Subscription } from '@google-cloud/pubsub';
import { request } from 'undici';
import { parse } from 'yaml';
import {
  ensureWorkerSubscription,
  isForWorker,
  workerSubscriptionName,
} from '../functions/messaging/worker-channel.ts';
import { startGoogleEmulators } from '../local/google-emulators.ts';
import type { JsonValue } from '../shared/context/map.ts';
import { interpolateJob, renderJob } from '../shared/context/render.ts';
import { serveTestApp, testApp } from '../test/helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../test/helpers/auth.ts';

const WORKERS = 100;
const UPDATES = 20;

const emulators = await startGoogleEmulators();
process.env.FIRESTORE_EMULATOR_HOST = emulators.firestoreHost;
process.env.PUBSUB_EMULATOR_HOST = emulators.pubsubHost;
const t = await testApp();
const admin = bearer(await bootstrapTestAdmin(t));
const server = await serveTestApp(t);
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

try {
  // Fan-out.
  const pubsub = await t.deps.clients.pubsub();
  const seen = new Map<number, { count: number; lastAt: number }>();
  const subscriptions: Subscription[] = [];
  for (let i = 0; i < WORKERS; i++) {
    const worker = `bench-w${i}`;
    await ensureWorkerSubscription(pubsub, 'default', worker);
    const subscription = pubsub.subscription(workerSubscriptionName('default', worker), {
      flowControl: { maxMessages: 10 },
    });
    subscription.on('message', (message: Message) => {
      message.ack();
      if (!isForWorker(message.attributes, 'default', worker)) return;
      const version = (JSON.parse(message.data.toString()) as { payload: { version: number } }).payload
        .version;
      const entry = seen.get(version) ?? { count: 0, lastAt: 0 };
      entry.count++;
      entry.lastAt = performance.now();
      seen.set(version, entry);
    });
    subscriptions.push(subscription);
  }
  await new Promise((r) => setTimeout(r, 2_000)); // let the streaming pulls open
  const latencies: number[] = [];
  const sentTimes: number[] = [];
  const fromSent: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const sentAt = performance.now();
    const res = await request(`${server.url}/api/contexts/update-global`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ bench: i }),
    });
    await res.body.text();
    const answeredAt = performance.now();
    sentTimes.push(answeredAt - sentAt);
    const version = i + 1;
    const deadline = answeredAt + 10_000;
    while ((seen.get(version)?.count ?? 0) < WORKERS && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    const entry = seen.get(version);
    if (!entry || entry.count < WORKERS)
      throw new Error(`update ${version} reached ${entry?.count ?? 0} of ${WORKERS} workers`);
    // Messages may arrive before the HTTP answer does: the publish happens before it is sent.
    latencies.push(Math.max(0, entry.lastAt - answeredAt));
    fromSent.push(entry.lastAt - sentAt);
  }
  await Promise.all(subscriptions.map((s) => s.close()));
  for (const list of [latencies, fromSent, sentTimes]) list.sort((a, b) => a - b);
  const show = (name: string, list: number[]) =>
    console.log(
      `  ${name.padEnd(24)} p50 ${pct(list, 0.5).toFixed(0)} ms, p99 ${pct(list, 0.99).toFixed(0)} ms`,
    );
  console.log(`fan-out to ${WORKERS} workers (own subscription each, streaming pull), ${UPDATES} updates:`);
  show('answer → last worker:', latencies);
  show('request → last worker:', fromSent);
  show('request → answer:', sentTimes);
  console.log(
    '  (0 ms: every worker had the message before the answer arrived; publishing precedes the answer)',
  );

  // Rendering: the realistic gcs job with 20 of its fields turned into references.
  const definition = parse(readFileSync('test/fixtures/jobs/gcs-full.yaml', 'utf8')) as Record<
    string,
    unknown
  >;
  const gcs = (definition.input as { gcs: Record<string, unknown> }).gcs;
  const context: Record<string, JsonValue> = {
    bucket: 'acme-logs-prod',
    lookback: '10m',
    worker: 'w1',
    job: 'ingest',
  };
  const templated = [
    'payload-mode',
    'mode',
    'ignore-linebreaks',
    'object-name-field',
    'creation-time-field',
    'last-modified-field',
    'content-length-field',
    'content-type-field',
    'etag-field',
    'data-field',
    'fingerprinting',
    'maximum-fingerprint-age',
  ];
  for (const field of templated) {
    const key = field.replaceAll('-', '_');
    context[key] = gcs[field] as JsonValue;
    gcs[field] = `{{${key}}}`;
  }
  (gcs['maximum-age'] as Record<string, unknown>).value = '{{max_age}}';
  context.max_age = '7d';
  (gcs.retry as Record<string, unknown>).timeout = '{{retry_timeout}}';
  context.retry_timeout = '2s';
  (gcs['object-names'] as unknown[])[0] = '{{prefix}}/';
  context.prefix = 'logs';
  (gcs['include-regex'] as unknown[])[0] = '{{include}}';
  context.include = '\\.ndjson(\\.gz)?$';
  const refs = JSON.stringify(definition).match(/\{\{/g)?.length ?? 0;
  const rate = (run: () => boolean) => {
    for (let i = 0; i < 2_000; i++) if (!run()) throw new Error('render failed');
    let n = 0;
    const started = performance.now();
    while (performance.now() - started < 2_000) {
      for (let i = 0; i < 100; i++) run();
      n += 100;
    }
    return n / ((performance.now() - started) / 1000);
  };
  const lines = readFileSync('test/fixtures/jobs/gcs-full.yaml', 'utf8').split('\n').length;
  console.log(`render of the ${lines}-line gcs job with ${refs} references, one core:`);
  const interpolate = rate(() => interpolateJob(definition, context).ok);
  const full = rate(() => renderJob(definition, context).ok);
  console.log(
    `  interpolation only:                         ${Math.round(interpolate).toLocaleString('en-US')} renders/s`,
  );
  console.log(
    `  interpolation + rendered-level validation:  ${Math.round(full).toLocaleString('en-US')} renders/s`,
  );

  // Reads.
  const reads: number[] = [];
  const until = performance.now() + 5_000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        try {
          const res = await request(`${server.url}/api/contexts/global`, { headers: admin });
          await res.body.text();
          reads.push(performance.now() - started);
        } catch {
          // A keep-alive socket the server just closed; the next request opens a new one.
        }
      }
    }),
  );
  reads.sort((a, b) => a - b);
  console.log(
    `GET /api/contexts/global, 8 connections, 5 s: ${Math.round(reads.length / 5)} req/s, p50 ${pct(reads, 0.5).toFixed(1)} ms, p99 ${pct(reads, 0.99).toFixed(1)} ms`,
  );
} finally {
  await server.close();
  await t.close();
  await emulators.stop();
}
