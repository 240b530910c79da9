/** `sluice job ...`: job definitions. */
import type { Command } from 'commander';
import type { CommandGroup } from './index.ts';
import { jobValidateAction } from './job-validate.ts';

export const jobCommands: CommandGroup = (program, wrap) => {
  const job: Command = program
    .command('job')
    .description('Validate, store, stage and deploy job definitions');
  job
    .command('validate')
    .description('Check job files offline (no server): prints FILE:LINE:COLUMN: path: message per error')
    .argument('<files...>', 'job definition files (YAML or JSON)')
    .addHelpText(
      'after',
      '\nExit codes: 0 all valid, 1 some invalid.\nExample:\n  sluice job validate jobs/*.yaml',
    )
    .action(
      wrap(async (ctx, files) => await jobValidateAction(ctx.io, files as string[], ctx.globals.output)),
    );
};
