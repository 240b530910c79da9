/**
 * A request's timeout holds through garbage collection. `AbortSignal.any` over
 * `AbortSignal.timeout` loses the timeout when Node collects it (nodejs/node#57736): an
 * `http-post` to a server that never answers waited for ever (19 s in a retry test meant to
 * take 1 s), and so would an `http-poll`. Here the heap is collected every 10 ms while each
 * waits on a server that never answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runDefinition } from '../outputs/helpers.ts';
import { eventSource, pollOf } from '../outputs/http-source.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let silent: Server;
let silentUrl: string;
let source: Awaited<ReturnType<typeof eventSource>>;

beforeAll(async () => {
  source = await eventSource(10);
  silent = createServer(() => {}); // takes every request, answers none
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
  await source.close();
});

/** Runs the job while the heap is collected every 10 ms; fails after 5 s (its timeouts are 300 ms). */
async function runCollecting(definition: Record<string, unknown>) {
  const collecting = setInterval(gc, 10);
  const started = Date.now();
  try {
    const result = await Promise.race([
      runDefinition(definition),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the 300 ms timeout never fired (5 s)')), 5_000),
      ),
    ]);
    return { ...result, ms: Date.now() - started };
  } finally {
    clearInterval(collecting);
  }
}

it('http-post: a request with no answer is cut at its timeout', async () => {
  const result = await runCollecting({
    name: 'post-to-silence',
    input: pollOf(source.url),
    output: { 'http-post': { url: silentUrl, timeout: '300ms', retries: 1 } },
  });
  expect(result.error?.message).toMatch(/no answer within 300 ms; gave up after 2 attempts/);
  expect(result.ms).toBeLessThan(3_000);
});

it('http-poll: a request with no answer is cut at its timeout', async () => {
  const result = await runCollecting({
    name: 'poll-silence',
    input: { 'http-poll': { url: silentUrl, timeout: '300ms' } },
    output: { print: {} },
  });
  expect(result.error?.message).toMatch(/no answer within 300 ms/);
  expect(result.ms).toBeLessThan(3_000);
});
