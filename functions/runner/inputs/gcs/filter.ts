/**
 * Which listed objects a run reads: `include-regex` (any must match the full name),
 * `exclude-regex` (none may match), and the timestamp tests (`maximum-age`, the run's
 * window). Returns the reason an object is skipped, counted in `job-run-ended`.
 *
 * @example
 *   const filter = objectFilter(plan, { now: new Date(), window: ctx.window });
 *   filter(meta); // undefined (read it) or 'excluded' | 'too-old' | 'outside-window' | ...
 */
import type { RunWindow } from '../../types.ts';
import type { GcsPlan } from './config.ts';
import type { ObjectMeta } from './list.ts';
import { objectTimestamp } from './timestamp.ts';

export type SkipReason = 'not-included' | 'excluded' | 'no-timestamp' | 'too-old' | 'outside-window';

export function objectFilter(
  plan: Pick<GcsPlan, 'include' | 'exclude' | 'timestamp' | 'maximumAgeMs'>,
  run: { now: Date; window?: RunWindow },
): (meta: ObjectMeta) => SkipReason | undefined {
  const oldest = plan.maximumAgeMs !== undefined ? run.now.getTime() - plan.maximumAgeMs : undefined;
  const timed = plan.timestamp.kind !== 'none' && (oldest !== undefined || run.window !== undefined);
  return (meta) => {
    if (plan.include.length && !plan.include.some((re) => re.test(meta.name))) return 'not-included';
    if (plan.exclude.some((re) => re.test(meta.name))) return 'excluded';
    if (!timed) return undefined;
    const time = objectTimestamp(meta, plan.timestamp);
    if (!time) return 'no-timestamp';
    const t = time.getTime();
    if (oldest !== undefined && t < oldest) return 'too-old';
    if (run.window && (t < run.window.start.getTime() || t >= run.window.end.getTime()))
      return 'outside-window';
    return undefined;
  };
}
