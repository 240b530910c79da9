/**
 * A Firestore transaction that loses to other writes of the same documents on every try ends
 * with gRPC ABORTED (the emulator says "Transaction lock timeout"). That was a 500 "internal
 * error"; nothing was written and the same request a moment later goes through, so it is a
 * 503 with Retry-After, which clients retry.
 */
import { Hono } from 'hono';
import { expect, it } from 'vitest';
import type { AppEnv } from '../../functions/app/env.ts';
import { onError } from '../../functions/app/errors.ts';

it('answers a transaction aborted by contention with 503 and Retry-After', async () => {
  const app = new Hono<AppEnv>();
  app.onError(onError);
  app.post('/x', () => {
    throw Object.assign(new Error('10 ABORTED: Transaction lock timeout.'), { code: 10 });
  });
  const res = await app.request('/x', { method: 'POST' });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(await res.json()).toEqual({
    error: {
      code: 'unavailable',
      message: 'other writes to the same data got in the way; nothing was changed, retry shortly',
    },
  });
});
