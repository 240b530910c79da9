/**
 * `npm run bench:worker`:
 * - deploy → first output line: a worker runtime (the one `sluice worker run` uses) runs
 *   in this process against the API; each round deploys an http-poll job and times the
 *   `deploy` request to the first printed event (p50/p99 over 10 rounds; target p99 < 2 s);
 * - events per second through `print` for a local JSON input (one answer of 200,000 objects
 *   from a local HTTP server, printed to a null sink).
 * Starts its own emulators unless FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST are set.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { ApiClient } from '../cli/api-client.ts';
import { createPrintOutput } from '../functions/runner/outputs/print/index.ts';
import { runJob } from '../functions/runner/runner.ts';
import { fileStores } from '../functions/runner/stores/file.ts';
import { runWorker } from '../functions/runner/worker-runtime.ts';
import { startGoogleEmulators } from '../local/google-emulators.ts';
import { validateJob } from '../shared/job/validate.ts';
import { serveTestApp, testApp } from '../test/helpers/app.ts';
import { bootstrapTestAdmin } from '../test/helpers/auth.ts';

const ROUNDS = 10;
const EVENTS = 200_000;

const emulators = await startGoogleEmulators();
process.env.FIRESTORE_EMULATOR_HOST = emulators.firestoreHost;
process.env.PUBSUB_EMULATOR_HOST = emulators.pubsubHost;
const t = await testApp();
const admin = await bootstrapTestAdmin(t);
const server = await serveTestApp(t);
const big = JSON.stringify(
  Array.from({ length: EVENTS }, (_, i) => ({ id: i, level: 'info', message: `event number ${i}` })),
);
const upstream = createServer((req, res) => res.end(req.url === '/big' ? big : '{"ok":true}'));
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const adminApi = new ApiClient({ server: server.url, token: admin });
const controller = new AbortController();
try {
  const { key } = await adminApi.post<{ key: string }>('/api/workers', { body: { id: 'bench-worker' } });
  const { token } = await adminApi.post<{ token: string }>('/api/tokens/create/api', {
    anonymous: true,
    body: { key, ttl: '1h' },
  });
  const workerApi = new ApiClient({ server: server.url, token });
  let firstLineAt = 0;
  const sink = new Writable({
    write(_chunk, _encoding, done) {
      if (!firstLineAt) firstLineAt = performance.now();
      done();
    },
  });
  const worker = runWorker({
    api: async () => workerApi,
    worker: 'bench-worker',
    output: createPrintOutput(sink),
    stores: fileStores('/tmp/sluice-bench-worker'),
    signal: controller.signal,
    log: () => {},
    waitSeconds: 10,
  });
  await new Promise((r) => setTimeout(r, 1_000));

  const latencies: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const name = `bench-${i}`;
    const yaml = `name: ${name}\ninput:\n  http-poll:\n    url: ${upstreamUrl}/ok\n    json: true\noutput:\n  print: {}\n`;
    await adminApi.put(`/api/jobs/${name}`, { body: yaml, contentType: 'application/yaml' });
    firstLineAt = 0;
    const started = performance.now();
    await adminApi.post(`/api/jobs/${name}/deploy`, { body: { workers: ['bench-worker'] } });
    while (!firstLineAt && performance.now() - started < 10_000) await new Promise((r) => setTimeout(r, 2));
    if (!firstLineAt) throw new Error(`round ${i}: no output within 10 s`);
    latencies.push(firstLineAt - started);
    await adminApi.post(`/api/jobs/${name}/undeploy`, { body: {} });
  }
  latencies.sort((a, b) => a - b);
  console.log(
    `deploy → first output line on a running worker, ${ROUNDS} rounds: p50 ${pct(latencies, 0.5).toFixed(0)} ms, p99 ${pct(latencies, 0.99).toFixed(0)} ms`,
  );
  controller.abort();
  await worker;

  // Throughput of print for a local JSON input.
  const validated = validateJob(
    { name: 'big', input: { 'http-poll': { url: `${upstreamUrl}/big`, json: true } }, output: { print: {} } },
    { level: 'rendered' },
  );
  if (!validated.ok) throw new Error('invalid bench job');
  let bytes = 0;
  const nullSink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  const started = performance.now();
  await runJob(validated.job, {
    worker: 'bench',
    output: createPrintOutput(nullSink),
    ...fileStores('/tmp/sluice-bench-worker'),
    signal: new AbortController().signal,
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `print throughput, one http-poll answer of ${EVENTS.toLocaleString('en-US')} JSON objects: ${Math.round(EVENTS / seconds).toLocaleString('en-US')} events/s (${(bytes / 1e6 / seconds).toFixed(1)} MB/s of output)`,
  );
} finally {
  controller.abort();
  upstream.close();
  await adminApi.close();
  await server.close();
  await t.close();
  await emulators.stop();
}
