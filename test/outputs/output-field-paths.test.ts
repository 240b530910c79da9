/**
 * Outputs read the fields they name as actions do: `meta.ts` is the `ts` field of the map
 * in `meta` (it read only a top-level field named `meta.ts`, so the time and the pubsub
 * attributes silently went missing); a top-level field of that very name still wins.
 */
import { expect, it } from 'vitest';
import { fieldValue } from '../../functions/runner/outputs/field-value.ts';
import { eventTime } from '../../functions/runner/outputs/gcs/event-time.ts';

it('time-field reads a dotted path into maps, and a top-level field of that name first', () => {
  expect(eventTime({ meta: { ts: '2020-05-06T07:08:09Z' } }, 'meta.ts')?.toISOString()).toBe(
    '2020-05-06T07:08:09.000Z',
  );
  expect(
    eventTime({ 'meta.ts': 1_000, meta: { ts: '2020-05-06T07:08:09Z' } }, 'meta.ts')?.toISOString(),
  ).toBe('1970-01-01T00:00:01.000Z');
  expect(eventTime({ meta: 'text' }, 'meta.ts')).toBeUndefined();
});

it('attribute and ordering-key fields read dotted paths, own properties only', () => {
  expect(fieldValue({ http: { status: 404 } }, 'http.status')).toBe(404);
  expect(fieldValue({ http: { status: 404 } }, 'http.code')).toBeUndefined();
  expect(fieldValue({ a: {} }, 'a.constructor')).toBeUndefined();
  expect(fieldValue({ key: 'k' }, 'key')).toBe('k');
});
