/**
 * The `http-poll` input: one request per run. With `json: true` an array answer gives
 * one event per element and an object one event; anything else (or `json: false`) gives
 * `{ "_raw": <body text> }`. Non-2xx answers and timeouts fail the run with a reason.
 */
import { parseDuration } from '../../../../shared/duration.ts';
import type { HttpPollInput } from '../../../../shared/job/schema.ts';
import type { Input, RunEvent } from '../../types.ts';

const BATCH_SIZE = 1_000;

export function createHttpPollInput(config: HttpPollInput): Input {
  const timeoutMs = parseDuration(config.timeout);
  return {
    async run(ctx, deliver) {
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let res: Response;
      try {
        res = await fetch(config.url, {
          method: config.method,
          headers: config.headers,
          ...(config.body !== undefined && config.method !== 'GET' && config.method !== 'HEAD'
            ? { body: config.body }
            : {}),
          signal,
        });
      } catch (err) {
        throw new Error(`request to ${config.url} failed: ${(err as Error).message}`);
      }
      const text = await res.text();
      if (!res.ok) throw new Error(`${config.url} answered ${res.status}: ${text.slice(0, 200)}`);
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
