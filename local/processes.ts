/**
 * Child processes that cannot outlive us. Each child runs in its own process group
 * under a tiny bash watchdog that kills the whole group when our process disappears,
 * so even a SIGKILLed test run or `npm start` leaves no emulator behind.
 *
 * @example
 *   const child = await spawnGuarded('firestore', bin, ['start', '--port=8080'], /Dev App Server is now running/);
 *   await child.stop();
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface GuardedProcess {
  name: string;
  pid: number;
  /** Everything the process printed so far (for error messages). */
  output(): string;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

const WATCHDOG = [
  'trap "trap - EXIT TERM INT; kill -TERM -- -$$ 2>/dev/null" EXIT TERM INT',
  '"$@" &',
  'child=$!',
  'while kill -0 "$SLUICE_PARENT_PID" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 0.5; done',
].join('\n');

export async function spawnGuarded(
  name: string,
  command: string,
  args: string[],
  ready: RegExp,
  options: {
    timeoutMs?: number;
    env?: NodeJS.ProcessEnv;
    /** `pid`: the process's, also for output that arrives after it died. */
    onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr', pid: number) => void;
  } = {},
): Promise<GuardedProcess> {
  const child = spawn('bash', ['-c', WATCHDOG, 'sluice-watchdog', command, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env, SLUICE_PARENT_PID: String(process.pid) },
  });
  // From the start: a runner may print a run's events before its ready line.
  // Listening also keeps the pipes drained, so a chatty child never blocks on a full buffer.
  child.stdout!.on('data', (chunk: Buffer) => options.onOutput?.(chunk, 'stdout', child.pid!));
  child.stderr!.on('data', (chunk: Buffer) => options.onOutput?.(chunk, 'stderr', child.pid!));
  let output = '';
  let onEarlyExit: ((code: number | null) => void) | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      fail(
        new Error(`${name} did not become ready within ${options.timeoutMs ?? 60_000} ms:\n${tail(output)}`),
      );
    }, options.timeoutMs ?? 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.length > 64_000) output = output.slice(-32_000);
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      killGroup(child, 'SIGKILL');
      reject(error);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    onEarlyExit = (code: number | null) =>
      fail(new Error(`${name} exited with code ${code} before it was ready:\n${tail(output)}`));
    child.once('exit', onEarlyExit);
  });
  if (onEarlyExit) child.removeListener('exit', onEarlyExit);
  const onParentExit = () => killGroup(child, 'SIGKILL');
  process.once('exit', onParentExit);
  // A child that ended by itself (a runner that was killed and is started again) needs no killing.
  void exited.then(() => process.removeListener('exit', onParentExit));
  return {
    name,
    pid: child.pid!,
    output: () => output,
    exited,
    async stop() {
      process.removeListener('exit', onParentExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

function tail(text: string): string {
  return text.split('\n').slice(-20).join('\n');
}
