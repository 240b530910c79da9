/**
 * One of the local stack's runner processes (local/runners.ts starts `SLUICE_RUNNERS` of
 * them): it takes the `cloud` worker's run requests from the Pub/Sub emulator and runs
 * them, as the runner function does in the cloud. Configured by the environment the stack
 * gives it (emulator hosts, project, secrets key, egress rules, budget, tenant cap).
 */
import { hostname } from 'node:os';
import { cloudClients } from '../functions/adapters/clients.ts';
import { loadConfig } from '../functions/app/config.ts';
import type { AppDeps } from '../functions/app/deps.ts';
import { createLogger } from '../functions/app/logger.ts';
import { startPullRunner } from '../functions/runs/pull-runner.ts';
import { readableLogStream } from './readable-log.ts';

const env = process.env;
const config = loadConfig(env);
const logger = createLogger(
  env.SLUICE_LOG_FORMAT === 'json' ? {} : { destination: readableLogStream(process.stderr) },
);
const deps: AppDeps = { config, clients: cloudClients({ projectId: config.projectId }), logger };
// A process that runs for the stack's lifetime loads what runs need now, not on its first
// request (the cloud's runner function keeps them lazy: its cold start matters more).
await Promise.all([
  import('@google-cloud/storage'),
  import('../functions/runner/components.ts'),
  deps.clients.firestore(),
]);
const runner = await startPullRunner(deps, {
  owner: `${hostname()}.${process.pid}`,
  concurrency: Number(env.SLUICE_RUNNER_CONCURRENCY ?? 4),
});
console.error(`runner ${process.pid} ready`);

const stop = async () => {
  await runner.stop();
  await deps.clients.close().catch(() => {});
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
