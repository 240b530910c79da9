/**
 * What a route family is built from. Families receive their dependencies
 * explicitly, so tests build an app against emulators with their own project id.
 */
import type { CloudClients } from '../adapters/clients.ts';
import type { AppConfig } from './config.ts';
import type { Logger } from './logger.ts';

export interface AppDeps {
  config: AppConfig;
  clients: CloudClients;
  logger: Logger;
}
