/**
 * The command groups of `sluice`, in the order `sluice --help` lists them.
 * A group is a function that adds its commands to the program.
 */
import type { Command } from 'commander';
import type { Wrap } from '../globals.ts';
import { authCommands } from './auth.ts';
import { contextCommands } from './context.ts';
import { enrollmentSecretCommands } from './enrollment-secret.ts';
import { eventsCommands } from './events.ts';
import { gcsCommands } from './gcs.ts';
import { identityCommands } from './identity.ts';
import { jobCommands } from './job.ts';
import { messageCommands } from './message.ts';
import { secretCommands } from './secret.ts';
import { tenantCommands } from './tenant.ts';
import { variableCommands } from './variable.ts';
import { workerRunCommands } from './worker-run.ts';

export type CommandGroup = (program: Command, wrap: Wrap) => void;

export const COMMAND_GROUPS: CommandGroup[] = [
  authCommands,
  tenantCommands,
  identityCommands,
  enrollmentSecretCommands,
  workerRunCommands,
  contextCommands,
  jobCommands,
  eventsCommands,
  secretCommands,
  variableCommands,
  messageCommands,
  gcsCommands,
];
