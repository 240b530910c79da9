/**
 * The `http-post` output: POSTs events in batches (NDJSON or a JSON array, gzip on
 * request), one request at a time while the next batch fills. 429, 5xx, timeouts and
 * connection errors are retried with backoff (`Retry-After` honoured, at most
 * RETRY_AFTER_CAP_MS); any other answer fails the batch with a `job-errors` event naming
 * the status, and every later `write` and `acknowledge` rejects, so the input commits
 * nothing and the events are sent again on the next run. Requests go through the egress
 * guard, like `http-poll`'s.
 *
 * @example
 *   const output = createHttpPostOutput(job.output['http-post'], { report, metrics, signal });
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { parseByteSize } from '../../../../shared/byte-size.ts';
import { parseDuration } from '../../../../shared/duration.ts';
import type { HttpPostOutput } from '../../../../shared/job/schema.ts';
import { EgressRefusedError, guardedFetch } from '../../egress/guarded-fetch.ts';
import { type EgressPolicy, egressPolicyFromEnv } from '../../egress/policy.ts';
import { excerpt as cut } from '../../excerpt.ts';
import { requestFailed, withoutUrlCredentials } from '../../fetch-errors.ts';
import { backoff } from '../../inputs/gcs/retry.ts';
import { requestDeadline } from '../../request-deadline.ts';
import { sleep } from '../../sleep.ts';
import {
  type JsonLines,
  markReported,
  type Output,
  type OutputMetrics,
  type RunEvent,
  type RunReport,
} from '../../types.ts';
import { BatchCutter, type TextBatch } from '../batch-buffer.ts';
import { retryAfterMs } from './retry-after.ts';

const gzipAsync = promisify(gzip);
export const RETRY_AFTER_CAP_MS = 5 * 60_000;
/** Of an answer, only an excerpt is kept (for the error report). */
const MAX_ANSWER_BYTES = 1024 ** 2;

export interface HttpPostOutputOptions {
  report: (report: RunReport) => void;
  metrics: OutputMetrics;
  signal?: AbortSignal;
  /** Where the job may connect; default: SLUICE_EGRESS_ALLOW of this process, else loopback only. */
  egress?: EgressPolicy;
  /** First retry backoff in ms (tests shorten it). */
  baseDelayMs?: number;
}

class DeliveryFailed extends Error {}

export function createHttpPostOutput(config: HttpPostOutput, options: HttpPostOutputOptions): Output {
  const { metrics } = options;
  const policy = options.egress ?? egressPolicyFromEnv();
  const cutter = new BatchCutter(
    { maxBytes: parseByteSize(config['max-bytes']), maxEvents: config['max-events'] },
    config.format,
  );
  const maxAgeMs = parseDuration(config['max-age']);
  const timeoutMs = parseDuration(config.timeout);
  const headers: Record<string, string> = {
    'content-type': config.format === 'ndjson' ? 'application/x-ndjson' : 'application/json',
    ...(config.gzip ? { 'content-encoding': 'gzip' } : {}),
    ...config.headers,
  };
  // What reports and errors show of the URL: never its user name and password.
  const shownUrl = withoutUrlCredentials(config.url);
  let sending: Promise<void> = Promise.resolve();
  let failure: Error | undefined;

  /**
   * The answer's excerpt goes in its own field, `answer`, not in `reason`: it is content the
   * job received (it may echo the request's headers), which viewers never see (visibility.ts).
   */
  const fail = (
    reason: string,
    detail: Record<string, unknown>,
    answered?: { answer: string; message: string },
  ) => {
    metrics.failures++;
    failure ??= markReported(new DeliveryFailed(answered?.message ?? reason));
    options.report({
      type: 'job-errors',
      payload: {
        output: 'http-post',
        url: shownUrl,
        reason,
        ...detail,
        ...(answered ? { answer: answered.answer } : {}),
      },
    });
  };

  const post = async (batch: TextBatch) => {
    if (failure) return;
    const raw = batch.body();
    const body = config.gzip ? await gzipAsync(raw) : raw;
    for (let attempt = 0; ; attempt++) {
      options.signal?.throwIfAborted();
      let wait: number | undefined;
      let transient: string;
      const deadline = requestDeadline(timeoutMs, options.signal);
      try {
        const res = await guardedFetch(
          config.url,
          { method: 'POST', headers, body, signal: deadline.signal },
          { policy, maxBytes: MAX_ANSWER_BYTES, maxRedirects: 0 },
        ).finally(deadline.clear);
        if (res.ok) {
          metrics.batches++;
          metrics.events += batch.events;
          metrics.bytes += body.length;
          return;
        }
        const excerpt = cut(new TextDecoder().decode(res.body), 200);
        if (res.status !== 429 && res.status < 500) {
          const undelivered = `the batch of ${batch.events} events was not delivered`;
          fail(
            `${shownUrl} answered ${res.status}; ${undelivered}`,
            { status: res.status, events: batch.events },
            { answer: excerpt, message: `${shownUrl} answered ${res.status}: ${excerpt}; ${undelivered}` },
          );
          return;
        }
        transient = `${shownUrl} answered ${res.status}`;
        wait = retryAfterMs(res.headers.get('retry-after'), RETRY_AFTER_CAP_MS);
      } catch (err) {
        if (options.signal?.aborted) throw err;
        if (err instanceof EgressRefusedError) {
          fail(err.message, { events: batch.events });
          return;
        }
        transient = requestFailed(config.url, err);
      }
      if (attempt >= config.retries) {
        fail(`${transient}; gave up after ${attempt + 1} attempts`, {
          events: batch.events,
          attempts: attempt + 1,
        });
        return;
      }
      metrics.retries++;
      if (wait !== undefined) await sleep(wait, options.signal);
      else
        await backoff(attempt, {
          retries: config.retries,
          timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.baseDelayMs !== undefined ? { baseDelayMs: options.baseDelayMs } : {}),
        });
    }
  };

  /** Sends a batch after the one in flight: at most one waits while one is sent. */
  const send = async (batch: TextBatch) => {
    const previous = sending;
    sending = previous.then(() => post(batch));
    await previous;
  };
  const sendAll = async (full: TextBatch[]) => {
    for (const batch of full) await send(batch);
  };
  const throwIfFailed = () => {
    if (failure) throw failure;
  };

  const ager = setInterval(
    () => {
      const open = cutter.current;
      if (open && Date.now() - open.openedAt >= maxAgeMs) {
        const batch = cutter.take();
        if (batch) void send(batch).catch(() => {});
      }
    },
    Math.max(10, Math.min(maxAgeMs, 1_000)),
  );
  ager.unref();

  return {
    async write(events: RunEvent[]) {
      throwIfFailed();
      await sendAll(cutter.addEvents(events));
    },
    async writeJsonLines(lines: JsonLines) {
      throwIfFailed();
      await sendAll(cutter.addLines(lines));
    },
    async acknowledge() {
      const open = cutter.take();
      if (open) await send(open);
      await sending;
      throwIfFailed();
    },
    async close() {
      clearInterval(ager);
      await sending.catch(() => {});
    },
  };
}
