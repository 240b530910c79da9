/**
 * Runs the `sluice` CLI in-process with captured output, as a user would see it.
 *
 * @example
 *   const r = await runCli(['context', 'get', 'global', '-o', 'json'], { env: { SLUICE_SERVER: url } });
 *   expect(r.code).toBe(0);
 */
import { run } from '../../cli/main.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  args: string[],
  options: { stdin?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await run(
    ['node', 'sluice', ...args],
    {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      stdinIsTty: options.stdin === undefined,
      readStdin: async () => options.stdin ?? '',
    },
    { SLUICE_CONFIG_DIR: '/nonexistent-sluice-config', ...options.env },
  );
  return { code, stdout, stderr };
}
