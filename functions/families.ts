/**
 * Every route family the API has. The local stack mounts all of them on one server;
 * each Cloud Function entry point (functions/entry/) mounts exactly one.
 */
import { apiKeysFamily } from './api-keys/routes.ts';
import type { FamilyFactory } from './app/create-app.ts';
import { authFamily } from './auth/routes.ts';
import { contextsFamily } from './contexts/routes.ts';
import { enrollmentSecretsFamily } from './enrollment-secrets/routes.ts';
import { eventsFamily } from './events/routes.ts';
import { healthFamily } from './health/routes.ts';
import { jobsFamily } from './jobs/routes.ts';
import { messagesFamily } from './messages/routes.ts';
import { secretsFamily } from './secrets/routes.ts';
import { tenantsFamily } from './tenants/routes.ts';
import { tokensFamily } from './tokens/routes.ts';
import { usersFamily } from './users/routes.ts';
import { variablesFamily } from './variables/routes.ts';
import { workerApiFamily } from './worker-api/routes.ts';
import { workersFamily } from './workers/routes.ts';

export const ALL_FAMILIES: FamilyFactory[] = [
  healthFamily,
  tokensFamily,
  authFamily,
  tenantsFamily,
  usersFamily,
  apiKeysFamily,
  workersFamily,
  enrollmentSecretsFamily,
  contextsFamily,
  jobsFamily,
  eventsFamily,
  secretsFamily,
  variablesFamily,
  messagesFamily,
  workerApiFamily,
];
