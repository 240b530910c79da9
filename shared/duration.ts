/**
 * Durations as the contract writes them: one or more `<number><unit>` parts with
 * units `ms`, `s`, `m`, `h`, `d` (`500ms`, `5m`, `1h30m`, `30d`). A bare number means
 * seconds only where a field allows it (the seed's `retry.timeout` default `30`).
 *
 * A hand-written parser rather than a library: the libraries we looked at (`ms`,
 * `parse-duration`) accept far more than the contract allows (`1 hour`, `1y`, `-5m`),
 * and a job file should be refused, not guessed at.
 *
 * @example
 *   parseDuration('1h30m'); // 5_400_000
 *   parseDuration(30, { bareSeconds: true }); // 30_000
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const BARE = /^\d+(?:\.\d+)?$/;

export class DurationError extends Error {
  override name = 'DurationError';
}

export interface DurationOptions {
  /** Accept a bare number (or numeric string) as seconds. */
  bareSeconds?: boolean;
}

export function parseDuration(value: string | number, options: DurationOptions = {}): number {
  if (typeof value === 'number' || BARE.test(value)) {
    const seconds = Number(value);
    if (!options.bareSeconds) {
      throw new DurationError(
        `"${value}" needs a unit: write ${value}s, ${value}m, ... (units ms, s, m, h, d)`,
      );
    }
    if (!Number.isFinite(seconds) || seconds < 0)
      throw new DurationError(`"${value}" is not a valid duration`);
    return seconds * 1000;
  }
  const text = value.trim();
  if (!WHOLE.test(text)) {
    throw new DurationError(
      `"${value}" is not a duration: use <number><unit> parts with units ms, s, m, h, d (e.g. 500ms, 5m, 1h30m, 30d)`,
    );
  }
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART))
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return total;
}

export function isDuration(value: unknown, options: DurationOptions = {}): boolean {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    parseDuration(value, options);
    return true;
  } catch {
    return false;
  }
}

/** The shortest contract spelling of a duration: `90000` → `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of [
    ['d', UNIT_MS.d],
    ['h', UNIT_MS.h],
    ['m', UNIT_MS.m],
    ['s', UNIT_MS.s],
    ['ms', UNIT_MS.ms],
  ] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}
