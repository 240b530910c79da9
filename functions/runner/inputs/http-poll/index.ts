/**
 * The `http-poll` input: one request per run. With `json: true` an array answer gives
 * one event per element and an object one event; anything else (or `json: false`) gives
 * `{ "_raw": <body text> }`. Non-2xx answers and timeouts fail the run with a reason.
 * The request goes through the egress guard (`../../egress/`): addresses the runner's
 * policy refuses fail the run with `egress refused: <address>: <reason>`, and an answer
 * over `max-response-size` fails it without being read further. A request that fails says
 * why (`fetch failed (ECONNREFUSED: ...)`, ../../fetch-errors.ts), never with the URL's
 * user name and password.
 */
import { formatByteSize, parseByteSize } from '../../../../shared/byte-size.ts';
import { parseDuration } from '../../../../shared/duration.ts';
import { DEFAULT_MAX_RESPONSE_SIZE } from '../../../../shared/job/inputs/http-poll.ts';
import type { HttpPollInput } from '../../../../shared/job/schema.ts';
import { AnsweredError } from '../../answered-error.ts';
import {
  EgressRefusedError,
  type GuardedResponse,
  guardedFetch,
  ResponseTooLargeError,
} from '../../egress/guarded-fetch.ts';
import { type EgressPolicy, egressPolicyFromEnv } from '../../egress/policy.ts';
import { excerpt } from '../../excerpt.ts';
import { requestFailed, withoutUrlCredentials } from '../../fetch-errors.ts';
import { requestDeadline } from '../../request-deadline.ts';
import type { Input, RunEvent } from '../../types.ts';

const BATCH_SIZE = 1_000;

export interface HttpPollOptions {
  /** Where the job may connect; default: SLUICE_EGRESS_ALLOW of this process, else loopback only. */
  egress?: EgressPolicy;
}

export function createHttpPollInput(config: HttpPollInput, options: HttpPollOptions = {}): Input {
  const timeoutMs = parseDuration(config.timeout);
  const maxBytes = parseByteSize(config['max-response-size'] ?? DEFAULT_MAX_RESPONSE_SIZE);
  const policy = options.egress ?? egressPolicyFromEnv();
  return {
    async run(ctx, deliver) {
      const deadline = requestDeadline(timeoutMs, ctx.signal);
      let res: GuardedResponse;
      try {
        res = await guardedFetch(
          config.url,
          {
            method: config.method,
            headers: config.headers,
            ...(config.body !== undefined && config.method !== 'GET' && config.method !== 'HEAD'
              ? { body: config.body }
              : {}),
            signal: deadline.signal,
          },
          { policy, maxBytes },
        ).finally(deadline.clear);
      } catch (err) {
        if (err instanceof EgressRefusedError) throw err;
        if (err instanceof ResponseTooLargeError) {
          throw new Error(
            `response too large: ${withoutUrlCredentials(config.url)} answered more than ${formatByteSize(maxBytes)} (max-response-size: ${formatByteSize(maxBytes)}; raise it in the job to read more)`,
          );
        }
        throw new Error(requestFailed(config.url, err));
      }
      const text = new TextDecoder().decode(res.body);
      if (!res.ok)
        throw new AnsweredError(
          `${withoutUrlCredentials(config.url)} answered ${res.status}`,
          excerpt(text, 200),
        );
      // Large answers go out in batches: the output can push back, and Ctrl-C stops between them.
      const events = toEvents(text, config.json);
      for (let i = 0; i < events.length && !ctx.signal.aborted; i += BATCH_SIZE)
        await deliver(events.slice(i, i + BATCH_SIZE));
    },
  };
}

export function toEvents(text: string, json: boolean): RunEvent[] {
  if (!json) return [{ _raw: text }];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [{ _raw: text }];
  }
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) =>
    item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as RunEvent) : { _raw: item },
  );
}
