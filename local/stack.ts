/**
 * The whole control plane on one machine: Google's Firestore and Pub/Sub emulators,
 * our Cloud Storage emulator, every route family on one Hono server (HTTPS with a
 * self-signed certificate by default), and the periodic tasks that the cloud runs
 * with Cloud Scheduler. Data lives under `dataDir` (`.sluice/`) and survives restarts.
 *
 * @example
 *   const stack = await startStack({ dataDir: '.sluice', port: 8443 });
 *   console.log(stack.url);
 *   await stack.stop();
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { cloudClients } from '../functions/adapters/clients.ts';
import { loadConfig } from '../functions/app/config.ts';
import { createApp } from '../functions/app/create-app.ts';
import type { AppDeps } from '../functions/app/deps.ts';
import { createLogger } from '../functions/app/logger.ts';
import { ALL_FAMILIES } from '../functions/families.ts';
import { startEventRelay } from '../functions/messaging/event-relay.ts';
import { LOCAL_EGRESS_ALLOW, parseEgressAllow } from '../functions/runner/egress/policy.ts';
import { webUi } from '../web/serve.ts';
import { dropFirestoreSigningKeys, localSigningKeyFile, securePermissions } from './data-dir.ts';
import { debouncedExport } from './debounced-export.ts';
import { startGoogleEmulators } from './google-emulators.ts';
import { startLocalWorker } from './local-worker.ts';
import { readableLogStream } from './readable-log.ts';
import { type Runners, runnerCount, startRunners } from './runners.ts';
import { startStorageEmulator } from './storage-emulator/index.ts';
import { PERIODIC_TASKS, STARTUP_TASKS } from './tasks.ts';
import { loadOrCreateCertificate } from './tls.ts';
import { startWakeEndpoint, type WakeEndpoint } from './wake-endpoint.ts';

export interface StackOptions {
  dataDir: string;
  port: number;
  host?: string;
  /** Serve plain HTTP instead of HTTPS. */
  http?: boolean;
  /** Serve each subfolder of this directory as a bucket (default: `<dataDir>/gcs`). */
  gcsDir?: string;
  projectId?: string;
  env?: NodeJS.ProcessEnv;
  /** Start our own emulators even when the environment names running ones (tests of persistence). */
  ownEmulators?: boolean;
  /** The wake endpoint's port (local/wake-endpoint.ts; default 0: a free one). */
  wakePort?: number;
}

export interface Stack {
  url: string;
  deps: AppDeps;
  emulatorEnv: Record<'STORAGE_EMULATOR_HOST' | 'FIRESTORE_EMULATOR_HOST' | 'PUBSUB_EMULATOR_HOST', string>;
  tlsFingerprint?: string;
  certPath?: string;
  /** Lines the start-up tasks want the operator to see (e.g. a generated admin password). */
  notices: string[];
  /** The `cloud` worker's runner processes (`SLUICE_RUNNERS`). */
  runners: Runners;
  /** Where object notifications wake trigger-less jobs on the `cloud` worker (`sluice gcs notify --wake`). */
  wakeUrl: string;
  stop(): Promise<void>;
}

/** A backstop for writes made by periodic tasks rather than requests. */
const EXPORT_EVERY_MS = 30_000;
/** How soon after a write the data reaches the export on disk (writes in between share one). */
const EXPORT_AFTER_WRITE_MS = 500;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function startStack(options: StackOptions): Promise<Stack> {
  const env = options.env ?? process.env;
  const host = options.host ?? '127.0.0.1';
  const projectId = options.projectId ?? 'demo-sluice';
  await securePermissions(options.dataDir);

  const google = await startGoogleEmulators({
    persistDir: options.dataDir,
    reuseFromEnv: !options.ownEmulators,
  });
  const gcs = await startStorageEmulator({
    host,
    port: 0,
    dir: options.gcsDir ?? join(options.dataDir, 'gcs'),
  }).catch(async (err: unknown) => {
    await google.stop();
    throw err;
  });
  // A bucket far away, for measurements: each storage request waits this long (bench:scale).
  const latencyMs = Number(env.SLUICE_STORAGE_EMULATOR_LATENCY_MS ?? 0);
  if (latencyMs > 0) gcs.setFaults({ latencyMs });
  const emulatorEnv = {
    STORAGE_EMULATOR_HOST: gcs.url,
    FIRESTORE_EMULATOR_HOST: google.firestoreHost,
    PUBSUB_EMULATOR_HOST: google.pubsubHost,
  };
  // The Google clients read these when they are constructed.
  Object.assign(process.env, emulatorEnv);

  const config = {
    ...loadConfig(env),
    projectId,
    secretsKey: env.SLUICE_SECRETS_KEY ?? (await localSecretsKey(options.dataDir)),
    signingKeyFile: await localSigningKeyFile(options.dataDir),
    // Jobs on the local `cloud` worker may reach local test servers; the cloud allows none.
    egressAllow: parseEgressAllow(env.SLUICE_EGRESS_ALLOW, LOCAL_EGRESS_ALLOW),
  };
  const logger = createLogger(
    env.SLUICE_LOG_FORMAT === 'json' ? {} : { destination: readableLogStream(process.stdout) },
  );
  const deps: AppDeps = { config, clients: cloudClients({ projectId }), logger };
  const timers: NodeJS.Timeout[] = [];
  let server: ServerType | undefined;
  let stopLocalWorker: (() => Promise<void>) | undefined;
  let runners: Runners | undefined;
  let wake: WakeEndpoint | undefined;
  let stopEventRelay: (() => void) | undefined;
  const exports = debouncedExport(
    () => google.exportFirestore(projectId),
    EXPORT_AFTER_WRITE_MS,
    (err) => deps.logger.error({ err }, 'firestore export failed'),
  );
  const stopAll = async () => {
    for (const timer of timers) clearInterval(timer);
    stopEventRelay?.();
    await Promise.all([stopLocalWorker?.(), runners?.stop(), wake?.stop()]);
    if (server) await closeServer(server);
    exports.stop();
    await exports.flush();
    await google
      .exportFirestore(projectId)
      .catch((err) => deps.logger.error({ err }, 'firestore export failed'));
    await deps.clients.close().catch(() => {});
    await gcs.stop();
    await google.stop();
  };

  try {
    const notices: string[] = [];
    if (await dropFirestoreSigningKeys(deps))
      notices.push(
        `token signing moved to ${join(options.dataDir, 'signing-keys.json')} (the old key sat in the Firestore emulator, readable by any local user): sign in again`,
      );
    for (const task of STARTUP_TASKS) notices.push(...(await task.run(deps, env, options.dataDir)));
    // The bootstrap admin, among others, must survive a crash in the first seconds.
    exports.schedule();

    const app = createApp(deps, ALL_FAMILIES);
    // The web UI at `/` (and its pages, and `/api/docs`), bundled in memory now.
    app.route('/', await webUi());
    const tls = options.http ? undefined : await loadOrCreateCertificate(join(options.dataDir, 'tls'));
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve(
        {
          // Every successful write is on disk within about a second (a crash loses no more).
          fetch: async (request, ...rest) => {
            const response = await app.fetch(request, ...rest);
            if (WRITE_METHODS.has(request.method) && response.status < 400) exports.schedule();
            return response;
          },
          port: options.port,
          hostname: host,
          ...(tls
            ? { createServer: createHttpsServer, serverOptions: { cert: tls.cert, key: tls.key } }
            : {}),
        },
        () => resolve(s),
      );
      s.once('error', reject);
    });
    const port = (server.address() as AddressInfo).port;
    const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
    const localWorker = await startLocalWorker(deps, {
      url,
      dataDir: options.dataDir,
      ...(tls ? { certPath: tls.certPath } : {}),
    });
    stopLocalWorker = () => localWorker.stop();
    runners = await startRunners(runnerCount(env), config, emulatorEnv);
    wake = await startWakeEndpoint(deps, host, options.wakePort ?? 0);

    for (const task of PERIODIC_TASKS)
      timers.push(everyTick(deps, task.name, task.everyMs, () => task.run(deps)));
    // Eventarc's part in the cloud: every recorded event reaches the message triggers that match it.
    stopEventRelay = startEventRelay(deps, {
      onError: (err) => deps.logger.warn({ err }, 'relaying events to message triggers failed'),
    });
    timers.push(
      everyTick(deps, 'firestore export', EXPORT_EVERY_MS, () => google.exportFirestore(projectId)),
    );

    return {
      url,
      deps,
      emulatorEnv,
      notices,
      runners,
      wakeUrl: wake.url,
      ...(tls ? { tlsFingerprint: tls.fingerprint, certPath: tls.certPath } : {}),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Stops accepting connections and ends the open ones: `close()` alone waits for every open
 * request, and a worker's long poll (`wait=20s`) or an event stream would hold Ctrl-C for as
 * long. Requests under way get a moment to finish first.
 */
async function closeServer(server: ServerType, graceMs = 500): Promise<void> {
  const http = server as import('node:http').Server;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  http.closeIdleConnections?.();
  const force = setTimeout(() => http.closeAllConnections?.(), graceMs);
  await closed;
  clearTimeout(force);
}

/** Runs a task on an interval, never two at once, logging failures instead of crashing the stack. */
function everyTick(
  deps: AppDeps,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    run()
      .catch((err) => deps.logger.warn({ err, task: name }, 'periodic task failed'))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return timer;
}

async function localSecretsKey(dataDir: string): Promise<string> {
  const file = join(dataDir, 'secrets.key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const key = randomBytes(32).toString('base64');
  await writeFile(file, key + '\n', { mode: 0o600 });
  return key;
}
