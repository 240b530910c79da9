/**
 * The Hono environment every route family shares: what a request carries once
 * the edge middleware has run.
 */
import type { Principal } from '../../shared/auth/principal.ts';
import type { Logger } from './logger.ts';

export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    /** Set by the auth middleware; absent on public routes. */
    principal: Principal;
  };
}
