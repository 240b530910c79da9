/**
 * The `http-post` output against an HTTP server that fails on purpose: 429 with
 * Retry-After, 503, a hang (the request times out), a connection reset; then a 400
 * that fails the batch with a job-errors event.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forViewer } from '../../shared/events/visibility.ts';
import { runDefinition } from './helpers.ts';
import { eventSource, pollOf } from './http-source.ts';

type Behaviour = 'ok' | '429' | '503' | 'hang' | 'reset' | '400' | '302';
let plan: Behaviour[] = [];
const delivered: { body: Buffer; headers: IncomingMessage['headers']; at: number }[] = [];
const attempts: { behaviour: Behaviour; at: number }[] = [];
let sink: ReturnType<typeof createServer>;
let sinkUrl: string;
let source: Awaited<ReturnType<typeof eventSource>>;

beforeAll(async () => {
  source = await eventSource(2500);
  sink = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const behaviour = plan.shift() ?? 'ok';
      attempts.push({ behaviour, at: Date.now() });
      if (behaviour === 'hang') return; // never answers: the output's timeout must fire
      if (behaviour === 'reset') return req.socket.destroy();
      if (behaviour === '429') {
        res.writeHead(429, { 'retry-after': '1' });
        return res.end('slow down');
      }
      if (behaviour === '503') {
        res.writeHead(503);
        return res.end('unavailable');
      }
      if (behaviour === '302') {
        res.writeHead(302, { location: '/elsewhere' });
        return res.end('moved');
      }
      if (behaviour === '400') {
        res.writeHead(400);
        return res.end('bad events');
      }
      delivered.push({ body: Buffer.concat(chunks), headers: req.headers, at: Date.now() });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/ingest`;
});
afterAll(async () => {
  sink.closeAllConnections();
  await new Promise((r) => sink.close(r));
  await source.close();
});

it('retries 429 (after Retry-After), 503, a hang and a reset, and delivers every event once', async () => {
  plan = ['429', '503', 'hang', 'reset'];
  delivered.length = 0;
  attempts.length = 0;
  const result = await runDefinition({
    name: 'to-http',
    input: pollOf(source.url),
    output: {
      'http-post': {
        url: sinkUrl,
        headers: { authorization: 'Bearer t0ken' },
        gzip: true,
        'max-events': 1000,
        // Long enough that an answer is never taken for a hang on a busy machine (the 429 was,
        // and its Retry-After went unseen).
        timeout: '1s',
        retries: 5,
      },
    },
  });
  expect(result.error).toBeUndefined();
  expect(attempts.slice(0, 4).map((a) => a.behaviour)).toEqual(['429', '503', 'hang', 'reset']);
  // Retry-After: 1 was honoured: the next attempt came a second later, not after a short backoff.
  expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950);
  const events = delivered.flatMap((d) => {
    expect(d.headers['content-encoding']).toBe('gzip');
    expect(d.headers.authorization).toBe('Bearer t0ken');
    return gunzipSync(d.body)
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { i: number });
  });
  expect(events.map((e) => e.i)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
  expect(delivered).toHaveLength(3);
  expect(result.metrics[0]).toMatchObject({
    output: 'http-post',
    events: 2500,
    batches: 3,
    retries: 4,
    failures: 0,
  });
});

it('a 400 fails the batch with a job-errors event naming the status, and the run fails', async () => {
  plan = ['400'];
  delivered.length = 0;
  const result = await runDefinition({
    name: 'to-http-400',
    input: pollOf(source.url),
    output: { 'http-post': { url: sinkUrl, format: 'json-array', 'max-events': 5000 } },
  });
  expect(result.error?.message).toMatch(/answered 400: bad events/);
  const error = result.reports.find((r) => r.type === 'job-errors' && r.payload.output === 'http-post');
  expect(error?.payload).toMatchObject({ status: 400, events: 2500, url: sinkUrl, answer: 'bad events' });
  // The answer is content the job received: in its own field, which viewers do not see.
  expect(String(error?.payload.reason)).not.toContain('bad events');
  const seen = forViewer({ source: 'job', payload: error!.payload as Record<string, unknown> });
  expect(JSON.stringify(seen)).not.toContain('bad events');
  expect(seen.payload.withheld).toContain('answer');
  expect(delivered).toHaveLength(0);
  expect(result.metrics[0]).toMatchObject({ output: 'http-post', failures: 1, events: 0 });
});

it('a redirect is not followed and not retried: it fails the batch naming the status', async () => {
  plan = ['302', '302', '302'];
  delivered.length = 0;
  attempts.length = 0;
  const result = await runDefinition({
    name: 'to-http-302',
    input: pollOf(source.url),
    output: { 'http-post': { url: sinkUrl, format: 'json-array', 'max-events': 5000, retries: 2 } },
  });
  expect(result.error?.message).toMatch(/answered 302: moved/);
  const error = result.reports.find((r) => r.type === 'job-errors' && r.payload.output === 'http-post');
  expect(error?.payload).toMatchObject({ status: 302, events: 2500 });
  expect(attempts).toHaveLength(1);
  expect(delivered).toHaveLength(0);
});

it('json-array bodies parse as arrays; the egress guard refuses the metadata address', async () => {
  plan = [];
  delivered.length = 0;
  const ok = await runDefinition({
    name: 'to-http-array',
    input: pollOf(source.url),
    output: { 'http-post': { url: sinkUrl, format: 'json-array', 'max-events': 2000 } },
  });
  expect(ok.error).toBeUndefined();
  expect(delivered.map((d) => (JSON.parse(d.body.toString()) as unknown[]).length)).toEqual([2000, 500]);

  const refused = await runDefinition({
    name: 'to-metadata',
    input: pollOf(source.url),
    output: { 'http-post': { url: 'http://169.254.169.254/computeMetadata/v1/', retries: 0 } },
  });
  expect(refused.error?.message).toMatch(/egress refused: 169\.254\.169\.254/);
});
