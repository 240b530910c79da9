/**
 * The scheduled function: Cloud Scheduler calls it once a tick (with an OIDC token;
 * only the scheduler's service account may invoke it) and it runs the periodic tasks
 * that the local stack runs on timers (`functions/scheduled/tasks.ts`: the `cloud` worker's job
 * runner, the outbox drain, ...). It keeps no state between calls, so a task that
 * wants to run less often than the tick runs on the ticks that cross its period.
 *
 * It answers 200 when every due task succeeded, 500 naming the tasks that failed (so
 * Cloud Scheduler records the failure and retries), and 503 when no task is
 * registered at all: a deployment without its runner must not look healthy.
 *
 * @example
 *   export const handler = tasksFunction(PERIODIC_TASKS);
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../app/deps.ts';
import type { PeriodicTask } from '../scheduled/tasks.ts';
import { cloudDeps } from './http-function.ts';

export interface TaskOutcome {
  task: string;
  ok: boolean;
  ms: number;
  error?: string;
}

/** A task is due on the tick that crosses a multiple of its period (every tick if its period is shorter). */
export function dueTasks<T extends PeriodicTask>(tasks: T[], now: number, tickMs: number): T[] {
  return tasks.filter(
    (task) =>
      task.everyMs <= tickMs || Math.floor(now / task.everyMs) !== Math.floor((now - tickMs) / task.everyMs),
  );
}

export async function runTasks(tasks: PeriodicTask[], deps: AppDeps): Promise<TaskOutcome[]> {
  return Promise.all(
    tasks.map(async (task) => {
      const started = performance.now();
      try {
        await task.run(deps);
        return { task: task.name, ok: true, ms: Math.round(performance.now() - started) };
      } catch (err) {
        deps.logger.error({ err, task: task.name }, 'scheduled task failed');
        const error = err instanceof Error ? err.message : String(err);
        return { task: task.name, ok: false, ms: Math.round(performance.now() - started), error };
      }
    }),
  );
}

export function tasksFunction(
  tasks: PeriodicTask[],
  options: { deps?: AppDeps; tickMs?: number; now?: () => number } = {},
) {
  const deps = options.deps ?? cloudDeps();
  const tickMs = options.tickMs ?? Number(process.env.SLUICE_TICK_MS ?? 60_000);
  const now = options.now ?? Date.now;
  return async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (tasks.length === 0) {
      deps.logger.error('no periodic tasks are registered: the scheduled runner has nothing to run');
      return reply(res, 503, {
        error: {
          code: 'unavailable',
          message: 'no periodic tasks are registered (functions/scheduled/tasks.ts)',
        },
      });
    }
    const outcomes = await runTasks(dueTasks(tasks, now(), tickMs), deps);
    const failed = outcomes.filter((o) => !o.ok);
    if (failed.length === 0) return reply(res, 200, { tasks: outcomes });
    reply(res, 500, {
      error: { code: 'internal', message: `tasks failed: ${failed.map((o) => o.task).join(', ')}` },
      tasks: outcomes,
    });
  };
}

function reply(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
