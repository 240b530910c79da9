/**
 * The local stack's runners of the `cloud` worker: `SLUICE_RUNNERS` processes (default 2),
 * each taking run requests from the Pub/Sub emulator's `sluice-runs-runner` subscription,
 * as autoscaled runner function instances take them in the cloud. A runner that dies is
 * started again (its requests come back from Pub/Sub once their ack deadline passes).
 * What jobs `print` appears in the `npm start` terminal as it is; their logs prefixed with `[cloud-N]`.
 */
import { fileURLToPath } from 'node:url';
import type { AppConfig } from '../functions/app/config.ts';
import { type GuardedProcess, spawnGuarded } from './processes.ts';

const RUNNER = fileURLToPath(new URL('./runner-process.ts', import.meta.url));
const RESTART_AFTER_MS = 1_000;

export interface Runners {
  /** The runner processes now running (tests kill them). */
  processes(): GuardedProcess[];
  stop(): Promise<void>;
}

export function runnerCount(env: NodeJS.ProcessEnv): number {
  const value = env.SLUICE_RUNNERS;
  if (value === undefined || value === '') return 2;
  if (!/^\d{1,2}$/.test(value))
    throw new Error(`SLUICE_RUNNERS must be a whole number from 0 to 99, got "${value}"`);
  return Number(value);
}

export async function startRunners(
  count: number,
  config: AppConfig,
  emulatorEnv: Record<string, string>,
  /** Where the jobs' `print` output goes; tests take it with the pid of the runner that printed it. */
  printTo: NodeJS.WritableStream | ((chunk: Buffer, pid: number) => void) = process.stdout,
  /** Where the runners' logs go, each line marked with its runner (tests keep them). */
  logTo: NodeJS.WritableStream = process.stderr,
): Promise<Runners> {
  const env = {
    ...emulatorEnv,
    SLUICE_PROJECT_ID: config.projectId,
    ...(config.secretsKey ? { SLUICE_SECRETS_KEY: config.secretsKey } : {}),
    SLUICE_EGRESS_ALLOW: config.egressAllow.join(','),
    SLUICE_CLOUD_RUN_BUDGET: config.cloudRunBudget,
    SLUICE_TENANT_RUN_CAP: String(config.tenantRunCap),
    SLUICE_RUN_LEASE: config.runLease,
    SLUICE_SHARD_OBJECTS: String(config.shardObjects),
    SLUICE_RUN_RETRY_BACKOFF: config.runRetryBackoff,
  };
  const running: (GuardedProcess | undefined)[] = new Array(count).fill(undefined);
  let stopping = false;
  const start = async (i: number): Promise<void> => {
    const child = await spawnGuarded(
      `runner ${i + 1}`,
      process.execPath,
      ['--import', 'tsx', RUNNER],
      /ready/,
      {
        env,
        // `print` output as it is (as the cloud worker's goes to Cloud Logging); logs marked.
        onOutput: (chunk, stream, pid) => {
          if (stream === 'stdout') typeof printTo === 'function' ? printTo(chunk, pid) : printTo.write(chunk);
          else logTo.write(chunk.toString().replace(/^(?=.)/gm, `[cloud-${i + 1}] `));
        },
      },
    );
    running[i] = child;
    void child.exited.then(async () => {
      running[i] = undefined;
      if (stopping) return;
      await new Promise((r) => setTimeout(r, RESTART_AFTER_MS));
      if (!stopping)
        await start(i).catch((err) => console.error(`runner ${i + 1} did not start again: ${err}`));
    });
  };
  await Promise.all(running.map((_, i) => start(i)));
  return {
    processes: () => running.filter((p): p is GuardedProcess => p !== undefined),
    async stop() {
      stopping = true;
      await Promise.all(running.map((p) => p?.stop()));
    },
  };
}
