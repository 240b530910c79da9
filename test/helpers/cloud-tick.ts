/**
 * One tick of the `cloud` worker as the cloud runs it: the tick publishes run requests to
 * the Pub/Sub emulator, and a runner (the same pull runner the local stack's runner
 * processes use) takes them until every request has an answer and none has been in hand
 * for a moment. Returns the scheduled runner's result of each request that reached a run.
 */
import type { AppDeps } from '../../functions/app/deps.ts';
import { dispatchDueRuns } from '../../functions/runs/dispatch.ts';
import { startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { RunAnswer } from '../../functions/runs/runner.ts';
import type { JobTickResult } from '../../functions/scheduled/tick.ts';

export async function cloudTick(
  deps: AppDeps,
  options: {
    concurrency?: number;
    quietMs?: number;
    /** Stops taking requests after this long even if more come (a job continued at every budget). */
    maxMs?: number;
    onAnswer?: (answer: RunAnswer) => void;
  } = {},
): Promise<JobTickResult[]> {
  const answers: RunAnswer[] = [];
  const runner = await startPullRunner(deps, {
    owner: 'test-runner',
    concurrency: options.concurrency ?? 4,
    onAnswer: (answer) => {
      answers.push(answer);
      options.onAnswer?.(answer);
    },
  });
  try {
    const requests = await dispatchDueRuns(deps);
    while (answers.length < requests.length) await new Promise((r) => setTimeout(r, 20));
    const enough = new Promise((r) => setTimeout(r, options.maxMs ?? 5_000).unref());
    await Promise.race([runner.idle(options.quietMs ?? 300), enough]);
  } finally {
    await runner.stop();
  }
  return answers.flatMap((a) => (a.result ? [a.result] : []));
}
