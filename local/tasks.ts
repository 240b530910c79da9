/**
 * What the local stack does besides serving HTTP: one-off start-up work and the
 * periodic ticks that stand in for Cloud Scheduler and Pub/Sub push in the cloud.
 * Later features add themselves here.
 */
import type { AppDeps } from '../functions/app/deps.ts';

export interface StartupTask {
  name: string;
  /** Returns lines to print to the operator (e.g. a generated admin password). */
  run(deps: AppDeps, env: NodeJS.ProcessEnv): Promise<string[]>;
}

export interface PeriodicTask {
  name: string;
  everyMs: number;
  run(deps: AppDeps): Promise<void>;
}

export const STARTUP_TASKS: StartupTask[] = [];

export const PERIODIC_TASKS: PeriodicTask[] = [];
