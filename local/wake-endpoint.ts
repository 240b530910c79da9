/**
 * The local stack's stand-in for the runner function's `/wake` route: object notifications
 * of `gcs` jobs without a trigger on the `cloud` worker, pushed by the Pub/Sub emulator
 * to the wake subscription that `sluice gcs notify --wake URL` makes, request a run as
 * in the cloud (functions/runs/wake.ts); the stack's runner processes then take it.
 * Plain HTTP on the stack's own host (127.0.0.1 by default): the Pub/Sub emulator pushes
 * without TLS or a token, which the cloud's push identity check stands for. Only `/wake`
 * is served; run requests reach the runners through Pub/Sub, never here.
 *
 * @example
 *   const wake = await startWakeEndpoint(deps, '127.0.0.1', 0);
 *   console.log(`sluice gcs notify BUCKET --job J --tenant T --wake ${wake.url}`);
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppDeps } from '../functions/app/deps.ts';
import { runnerFunction } from '../functions/entry/runner-function.ts';
import { WAKE_PATH } from '../shared/runs/wake.ts';

export interface WakeEndpoint {
  /** What to give `sluice gcs notify --wake`. */
  url: string;
  stop(): Promise<void>;
}

export async function startWakeEndpoint(deps: AppDeps, host: string, port: number): Promise<WakeEndpoint> {
  const runner = runnerFunction(deps);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (req.method !== 'POST' || path !== WAKE_PATH) {
      res.writeHead(404).end();
      return;
    }
    // Whatever one push does, the stack serving it goes on (an unhandled rejection ends it).
    runner(req, res).catch((err: unknown) => {
      deps.logger.warn({ err }, 'a wake push failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} on ${host} is in use (the wake endpoint for notified jobs): set SLUICE_WAKE_PORT to another port, or 0 for any free one`,
            )
          : err,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** `SLUICE_WAKE_PORT` for `npm start`: 8444 (next to the API's 8443) unless set; 0 picks a free port. */
export function wakePort(env: NodeJS.ProcessEnv): number {
  const value = env.SLUICE_WAKE_PORT;
  if (value === undefined || value === '') return 8444;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new Error(`SLUICE_WAKE_PORT must be a port number from 0 to 65535, got "${value}"`);
  return Number(value);
}
