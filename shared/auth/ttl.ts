/**
 * Token lifetimes: requested as a duration, default `30m`, between `1m` and the
 * configured maximum (`24h`). Out-of-range values are refused, never clamped.
 */
import { parseDuration } from '../duration.ts';
import { ApiError } from '../errors.ts';

export const MIN_TTL_MS = 60_000;

export function resolveTtl(
  requested: string | undefined,
  defaults: { defaultTtl: string; maxTtl: string },
): number {
  const text = requested ?? defaults.defaultTtl;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    throw ApiError.invalid(`ttl: ${(err as Error).message}`, [
      { path: 'ttl', message: (err as Error).message },
    ]);
  }
  const max = parseDuration(defaults.maxTtl);
  if (ms < MIN_TTL_MS || ms > max) {
    const message = `must be between 1m and ${defaults.maxTtl}, got ${text}`;
    throw ApiError.invalid(`ttl ${message}`, [{ path: 'ttl', message }]);
  }
  return ms;
}
