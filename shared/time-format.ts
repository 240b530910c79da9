/**
 * The time format of a window's `start-time`: `%Y-%m-%d %H:%M:%S%.3f %z`,
 * e.g. `2026-01-01 00:00:00.000 +0000` (fraction optional, offset `+hhmm` or `+hh:mm`).
 *
 * @example
 *   parseStartTime('2026-01-01 06:30:00.000 +0100').toISOString(); // '2026-01-01T05:30:00.000Z'
 */

const START_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? ([+-])(\d{2}):?(\d{2})$/;

export const START_TIME_FORMAT = '%Y-%m-%d %H:%M:%S%.3f %z';

export function parseStartTime(text: string): Date {
  const m = START_TIME.exec(text.trim());
  if (!m) {
    throw new Error(`"${text}" does not match ${START_TIME_FORMAT} (e.g. 2026-01-01 00:00:00.000 +0000)`);
  }
  const [, y, mo, d, h, mi, s, frac = '0', sign, oh, om] = m;
  const ms = Math.round(Number(`0.${frac}`) * 1000);
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const check = new Date(utc);
  if (
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    throw new Error(`"${text}" is not a real date and time`);
  }
  const offsetMinutes = (Number(oh) * 60 + Number(om)) * (sign === '-' ? -1 : 1);
  return new Date(utc - offsetMinutes * 60_000);
}
