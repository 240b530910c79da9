/**
 * The local stack in its own process, started the way the README says (`npm start` runs
 * `tsx local/main.ts`), with its own emulators (not the test run's shared ones), over
 * plain HTTP on a port the system picks as the stack binds it (`SLUICE_PORT=0`). A free
 * port chosen here was bound only after the emulators had started, seconds later, and
 * another test's server could take it meanwhile (EADDRINUSE in CI).
 *
 * @example
 *   const stack = await startStackProcess(dataDir, { SLUICE_LOG_FORMAT: 'json' });
 *   await fetch(`${stack.url}/api/health`);
 *   await stack.stop('SIGINT');
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface StackProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startStackProcess(
  dataDir: string,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<StackProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SLUICE_PORT: '0',
    SLUICE_HTTP: '1',
    SLUICE_WAKE_PORT: '0',
    ...extraEnv,
  };
  delete env.FIRESTORE_EMULATOR_HOST;
  delete env.PUBSUB_EMULATOR_HOST;
  delete env.STORAGE_EMULATOR_HOST;
  delete env.VITEST; // the logger is silent under vitest
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--data-dir', dataDir], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    out += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const ready = /sluice ready: (http:\/\/\S+)/.exec(out);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the stack exited with ${code}:\n${out}`)));
  });
  return {
    child,
    url,
    output: () => out,
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null) child.kill(signal);
      await exited;
    },
  };
}
