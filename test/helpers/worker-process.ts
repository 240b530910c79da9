/**
 * A worker as users run it: `sluice worker run` (bin/sluice.js) in its own process,
 * with its key in SLUICE_WORKER_KEY and a state folder of its own.
 *
 * @example
 *   const w = startWorkerProcess(api.url, key, 'edge');
 *   await until(() => w.output().includes('connected to'), 15_000);
 *   w.child.kill('SIGKILL');
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WorkerProcess {
  child: ChildProcess;
  /** Standard output and error so far, interleaved as they came. */
  output(): string;
  stderr(): string;
}

export function startWorkerProcess(server: string, key: string, name: string): WorkerProcess {
  const child = spawn(
    process.execPath,
    [
      'bin/sluice.js',
      'worker',
      'run',
      '--server',
      server,
      '--state-dir',
      mkdtempSync(join(tmpdir(), `sluice-${name}-`)),
    ],
    { env: { ...process.env, SLUICE_WORKER_KEY: key } },
  );
  let output = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
    stderr += d;
  });
  return { child, output: () => output, stderr: () => stderr };
}
