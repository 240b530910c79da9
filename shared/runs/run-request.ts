/**
 * A run request: the message the `cloud` worker's tick publishes to `sluice-runs` for each
 * job it finds due, and that a runner executes (functions/runs/). It names the job, not a
 * definition: the runner reads and renders the job itself, so a request that waited in the
 * queue runs what is deployed when it is taken, and a forged or replayed request can at most
 * make a runner look at a job that is not due (the runner's own due check decides).
 *
 * @example
 *   const request = RunRequestSchema.parse(JSON.parse(data));
 */
import { z } from 'zod';
import { PART_MAX_OBJECTS } from './part-limits.ts';

export { PART_MAX_BYTES, PART_MAX_OBJECTS } from './part-limits.ts';

/** Budget stops in a row without progress after which a run's rest is not requested again (functions/runs/stalls.ts). */
export const STALL_LIMIT = 3;

export const RunRequestSchema = z
  .object({
    tenant: z.string().min(1).max(128),
    job: z.string().min(1).max(128),
    /** The deployed version the tick saw (informational: the runner runs the current one). */
    version: z.number().int().nonnegative(),
    /** When the request was made (epoch ms). */
    requested_ms: z.number().int().nonnegative(),
    /**
     * `due`: the tick found it due; `continue`: the previous run stopped at its budget;
     * `part`: a run handed these objects over (`part`); `notified`: object notifications
     * came for a job without a trigger that reads them (runs/wake.ts).
     */
    reason: z.enum(['due', 'continue', 'part', 'notified']),
    part: z
      .object({
        /** The run that handed the objects over, and the part's number in it. */
        run: z.string().min(1).max(64),
        index: z.number().int().nonnegative(),
        /** The objects, as the input described them. */
        objects: z.array(z.record(z.string(), z.unknown())).min(1).max(PART_MAX_OBJECTS),
      })
      .strict()
      .optional(),
    /**
     * A run's rest (`continue`), or a part requested again, after a stop at the budget: how
     * many attempts in a row stopped there without progress. Absent: none.
     */
    stalls: z.number().int().min(1).max(STALL_LIMIT).optional(),
    /**
     * A part, or a run notifications woke, that found its tenant at its cap: when it first
     * waited (epoch ms). Parked requests go back to the queue oldest first (functions/runs/parked-runs.ts).
     */
    waiting_since_ms: z.number().int().nonnegative().optional(),
  })
  .strict()
  .refine((r) => (r.reason === 'part') === (r.part !== undefined), {
    message: 'a part request (and only one) carries its part',
  });

export type RunRequest = z.infer<typeof RunRequestSchema>;

/** The request in a Pub/Sub message's data, or why it is not one. */
export function parseRunRequest(
  data: string | Uint8Array,
): { ok: true; request: RunRequest } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data));
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  const parsed = RunRequestSchema.safeParse(value);
  return parsed.success
    ? { ok: true, request: parsed.data }
    : { ok: false, error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
}
