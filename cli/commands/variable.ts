/** `sluice variable set NAME VALUE`, `ls`, `rm` (admin): the `${dyn|NAME}` store. */

import { addListCommand } from '../list-pages.ts';
import type { CommandGroup } from './index.ts';

export const variableCommands: CommandGroup = (program, wrap) => {
  const variable = program
    .command('variable')
    .description('Variables referenced by jobs as ${dyn|NAME} (admin)');
  variable
    .command('set')
    .argument('<name>')
    .argument('<value>')
    .description('Set a variable; running workers use it from their next run on, without a redeploy')
    .action(
      wrap(async (ctx, name, value) => {
        await (await ctx.api()).put(`/api/variables/${encodeURIComponent(name as string)}`, {
          body: { value },
        });
        ctx.io.stderr(`set variable ${name}\n`);
      }),
    );
  addListCommand(variable, wrap, {
    path: '/api/variables',
    columns: ['name', 'value', 'updated_at'],
    description: 'List variables and their values',
  });
  variable
    .command('rm')
    .argument('<name>')
    .description('Delete a variable; jobs that reference it use their fallback, or fail without one')
    .action(
      wrap(async (ctx, name) => {
        await (await ctx.api()).delete(`/api/variables/${encodeURIComponent(name as string)}`);
        ctx.io.stderr(`deleted variable ${name}\n`);
      }),
    );
};
