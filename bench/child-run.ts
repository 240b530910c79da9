/**
 * Runs a benchmark subject in a process of its own and measures it from outside: wall
 * time and peak resident memory (the kernel's high-water mark of that process alone, so
 * neither the data generation nor the emulators of the benchmark count). Uses
 * `/usr/bin/time -f %M` when present, else samples VmHWM in `/proc/PID/status`.
 * Standard output goes to /dev/null unless `stdout` says otherwise.
 *
 * @example
 *   const run = await runChild(process.execPath, ['bin/sluice.js', 'job', 'run', 'job.yaml'], { env });
 *   console.log(run.wallS, run.peakRssMb, run.stderr);
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ChildRun {
  wallS: number;
  peakRssMb: number;
  stderr: string;
}

const GNU_TIME = '/usr/bin/time';

export async function runChild(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; stdout?: number } = {},
): Promise<ChildRun> {
  const rssFile = join(tmpdir(), `sluice-bench-rss-${process.pid}-${Date.now()}`);
  const timed = existsSync(GNU_TIME);
  const [file, argv] = timed ? [GNU_TIME, ['-f', '%M', '-o', rssFile, command, ...args]] : [command, args];
  const stdout = options.stdout ?? openSync('/dev/null', 'w');
  const started = performance.now();
  const child = spawn(file, argv, {
    stdio: ['ignore', stdout, 'pipe'],
    env: options.env ?? process.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  // Only the tail matters (the last report lines); a long run must not grow the parent.
  child.stderr!.on('data', (text: string) => {
    stderr = (stderr + text).slice(-64 * 1024);
  });
  let sampledKb = 0;
  const sampler = timed
    ? undefined
    : setInterval(() => {
        try {
          const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
          sampledKb = Math.max(sampledKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
        } catch {
          // The process ended between two samples.
        }
      }, 20);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const wallS = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}:\n${stderr}`);
  let peakKb = sampledKb;
  if (timed) {
    peakKb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop());
    rmSync(rssFile, { force: true });
  }
  return { wallS, peakRssMb: peakKb / 1024, stderr };
}

/** The middle value (the lower middle of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
