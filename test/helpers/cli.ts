/**
 * Runs the `sluice` CLI in-process with captured output, as a user would see it.
 *
 * @example
 *   const r = await runCli(['context', 'get', 'global', '-o', 'json'], { env: { SLUICE_SERVER: url } });
 *   expect(r.code).toBe(0);
 */
import { run } from '../../cli/main.ts';
import { serveTestApp, type TestApp, testApp } from './app.ts';
import { bootstrapTestAdmin } from './auth.ts';

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

/** A test app served over HTTP, and the CLI run against it as its system admin. */
export interface ServedCli {
  t: TestApp;
  /** The served app's URL (SLUICE_SERVER). */
  url: string;
  /** SLUICE_SERVER and the admin's SLUICE_TOKEN. */
  env: NodeJS.ProcessEnv;
  /** Runs the CLI with `env`, `stdin` on its standard input when given. */
  run(args: string[], stdin?: string): Promise<CliRun>;
  close(): Promise<void>;
}

export async function servedCli(): Promise<ServedCli> {
  const t = await testApp();
  const token = await bootstrapTestAdmin(t);
  const server = await serveTestApp(t);
  const env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  return {
    t,
    url: server.url,
    env,
    run: (args, stdin) => runCli(args, { env, ...(stdin === undefined ? {} : { stdin }) }),
    async close() {
      await server.close();
      await t.close();
    },
  };
}

/** `sluice job validate FILE`: its exit code and the `FILE:line:col: path: message` lines it printed. */
export async function validateErrorLines(file: string): Promise<{ code: number; lines: string[] }> {
  const r = await runCli(['job', 'validate', file]);
  return { code: r.code, lines: r.stderr.split('\n').filter((line) => line.startsWith(file)) };
}
