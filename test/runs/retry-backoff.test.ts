/**
 * The local stack's runners give a failed run request the cloud's back-off: Pub/Sub's retry
 * policy waits 10 s, doubling up to 10 minutes, between deliveries (terraform/runs.tf), while
 * the emulator, answered "again", delivered it at once: a failing job ran five times within
 * two seconds, its deployment flipping between `running` and `failed`, and was dead-lettered.
 * Here the first wait is 1 s (SLUICE_RUN_RETRY_BACKOFF).
 */
import { expect, it } from 'vitest';
import { retryDelaySeconds, startPullRunner } from '../../functions/runs/pull-runner.ts';
import type { StorageEmulator } from '../../local/storage-emulator/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudGcsYaml, deployToCloud } from '../helpers/cloud-jobs.ts';
import { withCloudTestEnv } from '../helpers/cloud-test-env.ts';
import { json } from '../helpers/http.ts';
import { printed } from '../helpers/printed.ts';
import { until } from '../helpers/until.ts';

let t: TestApp;
let gcs: StorageEmulator;
withCloudTestEnv((env) => ({ t, gcs } = env));

it('a failing run comes back after 1 s, then 2 s, then 4 s, not at once', async () => {
  const admin = bearer(await bootstrapTestAdmin(t));
  Object.assign(t.deps.config, { runRetryBackoff: '1s' });
  const runner = await startPullRunner(t.deps, { owner: 'backoff', concurrency: 1, print: printed().output });
  const attempts = async () =>
    (
      (await json(await t.request('/api/events?type=job-errors&job=failing', { headers: admin }))).events as {
        time: string;
      }[]
    )
      .map((e) => Date.parse(e.time))
      .sort((a, b) => a - b);
  try {
    // The bucket does not exist: every run fails.
    await deployToCloud(t, admin, 'failing', cloudGcsYaml('failing', 'no-such-bucket', 'x/'));
    await until(async () => (await attempts()).length >= 4, 30_000, 'four failed deliveries');
  } finally {
    await runner.stop();
  }
  const [first, second, third, fourth] = await attempts();
  // Each gap is the wait plus a run; the emulator rounds deadlines to whole seconds.
  expect(second! - first!).toBeGreaterThanOrEqual(900);
  expect(third! - second!).toBeGreaterThanOrEqual(1_900);
  expect(fourth! - third!).toBeGreaterThanOrEqual(3_900);
}, 60_000);

it('the waits double from the first, up to the cloud policy’s 10 minutes; none in tests', () => {
  expect([1, 2, 3, 4, 5].map((attempt) => retryDelaySeconds(10, attempt))).toEqual([10, 20, 40, 80, 160]);
  expect(retryDelaySeconds(10, 9)).toBe(600);
  expect(retryDelaySeconds(10, undefined)).toBe(10);
  expect(retryDelaySeconds(0, 4)).toBe(0);
});
