/**
 * A push cut off mid-body must not take the local stack down. The wake endpoint ran the
 * runner function without catching it, and reading a body whose sender went away threw:
 * the unhandled rejection ended `npm start` (API, UI, workers and all) about 300 ms later.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the local wake endpoint', () => {
  it('survives a push cut off mid-body and serves the next', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
      (resolve) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', 'test/fixtures/processes/wake-abort.ts'],
          { timeout: 30_000 },
          (err, stdout, stderr) =>
            resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^alive 204$/m);
  }, 40_000);
});
