/**
 * The `worker-api` family: what a worker calls, with its own token (role `worker`;
 * the worker is the token's subject). Each route group lives in its own module.
 * `GET /api/worker/stream` alone authenticates by a single-use ticket (stream.ts).
 */
import { except } from 'hono/combine';
import type { AppDeps } from '../app/deps.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { registerHeartbeat } from './heartbeat.ts';
import { registerWorkerJobs } from './jobs.ts';
import { registerWorkerMessages } from './messages.ts';
import { registerSecretResolution } from './secrets.ts';
import { registerWorkerStream, STREAM_PATH } from './stream.ts';
import { registerWorkerTelemetry } from './telemetry.ts';
import { registerWorkerVariables } from './variables.ts';

export function workerApiFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use(
    '/worker/*',
    except((c) => c.req.path === `/api${STREAM_PATH}`, authenticate(deps), requireRole('worker')),
  );
  registerWorkerJobs(routes, deps);
  registerHeartbeat(routes, deps);
  registerWorkerStream(routes, deps, registerWorkerMessages(routes, deps));
  registerSecretResolution(routes, deps);
  registerWorkerVariables(routes, deps);
  registerWorkerTelemetry(routes, deps);
  return { name: 'worker-api', routes };
}
