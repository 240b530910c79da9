/**
 * Every route family the API has. The local stack mounts all of them on one server;
 * each Cloud Function entry point (functions/entry/) mounts exactly one.
 */
import type { FamilyFactory } from './app/create-app.ts';
import { healthFamily } from './health/routes.ts';

export const ALL_FAMILIES: FamilyFactory[] = [healthFamily];
