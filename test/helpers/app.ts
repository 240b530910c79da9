/**
 * Builds the API for a test file against the shared emulators, isolated by a
 * project id of its own, with logs captured in memory (tests scan them for secrets).
 *
 * @example
 *   const t = await testApp();
 *   const res = await t.request('/api/health');
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { cloudClients } from '../../functions/adapters/clients.ts';
import { loadConfig } from '../../functions/app/config.ts';
import { createApp, type FamilyFactory } from '../../functions/app/create-app.ts';
import type { AppDeps } from '../../functions/app/deps.ts';
import { createLogger } from '../../functions/app/logger.ts';
import { ALL_FAMILIES } from '../../functions/families.ts';

export function testProjectId(): string {
  return `demo-test-${randomUUID().slice(0, 8)}`;
}

export interface TestApp {
  deps: AppDeps;
  projectId: string;
  app: ReturnType<typeof createApp>;
  /** Every log line written so far, as text. */
  logs(): string;
  request(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export function testDeps(projectId = testProjectId()): { deps: AppDeps; logs: () => string } {
  let captured = '';
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      captured += chunk.toString();
      callback();
    },
  });
  const config = {
    ...loadConfig({}),
    projectId,
    secretsKey: Buffer.alloc(32, 7).toString('base64'),
    // As the local stack: jobs on the `cloud` worker may reach test servers on loopback.
    egressAllow: ['127.0.0.0/8', '::1/128'],
    // A failed run request comes back at once (test/runs/retry-backoff.test.ts sets its own).
    runRetryBackoff: '0s',
  };
  const deps: AppDeps = {
    config,
    clients: cloudClients({ projectId }),
    logger: createLogger({ level: 'debug', destination }),
  };
  return { deps, logs: () => captured };
}

export async function testApp(families: FamilyFactory[] = ALL_FAMILIES): Promise<TestApp> {
  const projectId = testProjectId();
  const { deps, logs } = testDeps(projectId);
  const app = createApp(deps, families);
  return {
    deps,
    projectId,
    app,
    logs,
    request: async (path, init) => await app.request(path, init),
    close: () => deps.clients.close(),
  };
}

/** Serves a test app over HTTP on a free port (for the CLI and benchmarks). */
export async function serveTestApp(t: TestApp): Promise<{ url: string; close(): Promise<void> }> {
  const { serve } = await import('@hono/node-server');
  const handling = inFlight(t.app.fetch);
  return await new Promise((resolve) => {
    const server = serve({ fetch: handling.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: async () => {
          await new Promise<void>((done) => server.close(() => done()));
          await handling.settled();
        },
      });
    });
  });
}

/**
 * The app's fetch, with the requests it is still handling: a client killed mid-request
 * closes its connection, and the server closes, while the handler still waits on
 * Firestore; closing the test app's clients under it then fails it as an unhandled
 * rejection (a CI run failed so, in test/messaging/job-chaining.test.ts).
 */
function inFlight(fetch: TestApp['app']['fetch']) {
  const handling = new Set<Promise<unknown>>();
  return {
    fetch: ((...args: Parameters<typeof fetch>) => {
      const answer = Promise.resolve(fetch(...args));
      const settled = answer.catch(() => {});
      handling.add(settled);
      void settled.finally(() => handling.delete(settled));
      return answer;
    }) as typeof fetch,
    settled: () => Promise.all(handling).then(() => {}),
  };
}

/**
 * Serves a test app over HTTPS on a free port, with a self-signed certificate made the
 * way the local stack makes its own (local/tls.ts) in `dir`: for clients that must check it.
 */
export async function serveTestAppOverHttps(
  t: TestApp,
  dir: string,
): Promise<{ url: string; cert: string; certPath: string; close(): Promise<void> }> {
  const [{ serve }, { createServer }, { join }, { loadOrCreateCertificate }] = await Promise.all([
    import('@hono/node-server'),
    import('node:https'),
    import('node:path'),
    import('../../local/tls.ts'),
  ]);
  const tls = await loadOrCreateCertificate(join(dir, 'tls'));
  const handling = inFlight(t.app.fetch);
  return await new Promise((resolve) => {
    const server = serve(
      {
        fetch: handling.fetch,
        port: 0,
        hostname: '127.0.0.1',
        createServer,
        serverOptions: { cert: tls.cert, key: tls.key },
      },
      (info) =>
        resolve({
          url: `https://127.0.0.1:${info.port}`,
          cert: tls.cert,
          certPath: tls.certPath,
          close: async () => {
            await new Promise<void>((done) => server.close(() => done()));
            await handling.settled();
          },
        }),
    );
  });
}
