/** The time an event carries in `field`: RFC 3339 text or epoch milliseconds; undefined if none. */
import type { RunEvent } from '../../types.ts';
import { fieldValue } from '../field-value.ts';

export function eventTime(event: RunEvent, field: string): Date | undefined {
  const value = fieldValue(event, field);
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}
